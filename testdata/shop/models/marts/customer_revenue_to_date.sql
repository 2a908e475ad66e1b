/* refill
description: Each customer's revenue to date, carried from the day before (a cumulative model).
partition_by: order_date
grain: day
start: 2024-01-01
end: 2024-04-30             # the example data ends here
depends_on_past: self       # each day reads yesterday's rows of this table
columns:
  order_date: date
  customer_id: bigint
  orders_to_date: bigint
  revenue_to_date: double
tags: [finance]
*/
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT {{ start }} AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM {{ ref("staging.orders") }}
  WHERE order_date >= {{ start }} AND order_date < {{ end }}
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM {{ this }}
  WHERE order_date = {{ date_add(start, -1, "day") }}
) AS totals
GROUP BY customer_id
