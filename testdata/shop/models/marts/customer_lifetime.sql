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
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM {{ ref("staging.orders") }}) AS o
JOIN {{ source("raw.customers") }} AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name
