/* refill
description: Orders worth counting, one partition per order day.
partition_by: order_date
grain: day
start: 2024-01-01
end: 2024-04-30             # the example data ends here
batch: 7                    # a week of days per statement in backfills
tags: [core]
audits:
  - not_null: [order_id, order_date, amount]
  - unique: [order_id]
  - accepted_values: {column: status, values: [placed, shipped, returned]}
*/
SELECT order_id, customer_id, order_date, amount, status, region
FROM {{ source("raw.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
  AND amount >= {{ var("min_amount") }}
  AND status <> 'test'
