/* refill
description: Every customer with their first and latest order, how many, and what they paid; a whole table over the daily staging models, as of its horizon.
audits:
  - unique: [customer_id]
  - not_null: [customer_id, number_of_orders, customer_lifetime_value]
*/
SELECT c.customer_id, c.first_name, c.last_name,
       o.first_order, o.most_recent_order,
       coalesce(o.number_of_orders, 0) AS number_of_orders,
       coalesce(p.lifetime_value, 0) AS customer_lifetime_value
FROM {{ ref("stg_customers") }} AS c
LEFT JOIN (
  SELECT customer_id, min(order_date) AS first_order, max(order_date) AS most_recent_order,
         CAST(count(*) AS BIGINT) AS number_of_orders
  FROM {{ ref("stg_orders") }}
  GROUP BY customer_id
) AS o ON o.customer_id = c.customer_id
LEFT JOIN (
  SELECT o.customer_id, sum(p.amount) AS lifetime_value
  FROM {{ ref("stg_payments") }} AS p
  JOIN {{ ref("stg_orders") }} AS o ON o.order_id = p.order_id
  GROUP BY o.customer_id
) AS p ON p.customer_id = c.customer_id
