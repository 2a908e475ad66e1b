/* refill
description: Revenue per day.
partition_by: order_date
grain: day
start: 2024-01-01
end: 2024-04-30             # the example data ends here
batch: 7                    # a week of days per statement in backfills
tags: [finance]
audits:
  - not_null: [order_date, revenue]
  - unique: [order_date]
  - row_count: {min: 1}
*/
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM {{ ref("staging.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
GROUP BY order_date
