/* refill
description: Revenue over the seven days ending on each day.
partition_by: day
grain: day
start: 2024-01-01
end: 2024-04-30             # the example data ends here
batch: 7                    # a week of days per statement in backfills
depends_on_past: 6        # each day reads the six days before it too
tags: [finance]
*/
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM {{ ref("daily_revenue") }} AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= {{ date_add(start, -6, "day") }} AND d.order_date < {{ end }}
  AND d.order_date + o.n >= {{ start }} AND d.order_date + o.n < {{ end }}
GROUP BY d.order_date + o.n
