/* refill
description: Orders, one partition per order day. The data ends in April 2018; the model has no end, as a live source would not.
partition_by: order_date
grain: day
start: 2018-01-01
batch: 1
audits:
  - unique: [order_id]
  - accepted_values: {column: status, values: [placed, shipped, completed, return_pending, returned]}
*/
SELECT id AS order_id, user_id AS customer_id, order_date, status
FROM {{ source("raw.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
