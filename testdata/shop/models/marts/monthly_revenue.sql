/* refill
description: Revenue per month, from the daily figures.
partition_by: month_start
grain: month
start: 2024-01-01
end: 2024-04
tags: [finance]
*/
SELECT {{ cast_date(date_trunc("month", ident("order_date"))) }} AS month_start,
       sum(orders) AS orders,
       sum(revenue) AS revenue,
       count(*) AS days
FROM {{ ref("daily_revenue") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
GROUP BY {{ cast_date(date_trunc("month", ident("order_date"))) }}
