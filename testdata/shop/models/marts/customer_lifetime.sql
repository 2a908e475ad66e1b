/* refill
description: Every customer's orders to date; rebuilt as a whole table.
audits:
  - unique: [customer_id]
*/
SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
FROM {{ ref("staging.orders") }} AS o
JOIN {{ source("raw.customers") }} AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name
