-- marts.customer_lifetime (customer_lifetime.sql) partitions all..all
SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM "STAGING"."ORDERS") AS o
JOIN "RAW"."CUSTOMERS" AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name;

-- marts.customer_revenue_to_date (customer_revenue_to_date.sql) partitions 2024-01-02..2024-01-02
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT '2024-01-02'::DATE AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM "STAGING"."ORDERS"
  WHERE order_date >= '2024-01-02'::DATE AND order_date < '2024-01-03'::DATE
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM "MARTS"."CUSTOMER_REVENUE_TO_DATE"
  WHERE order_date = '2024-01-01'::DATE
) AS totals
GROUP BY customer_id;

-- marts.daily_revenue (daily_revenue.sql) partitions 2024-01-02..2024-01-02
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM "STAGING"."ORDERS"
WHERE order_date >= '2024-01-02'::DATE AND order_date < '2024-01-03'::DATE
GROUP BY order_date;

-- marts.daily_revenue (daily_revenue.sql) partitions 2024-01-01..2024-01-03
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM "STAGING"."ORDERS"
WHERE order_date >= '2024-01-01'::DATE AND order_date < '2024-01-04'::DATE
GROUP BY order_date;

-- marts.monthly_revenue (monthly_revenue.sql) partitions 2024-02..2024-02
SELECT TO_DATE(DATE_TRUNC('MONTH', "ORDER_DATE")) AS month_start,
       sum(orders) AS orders,
       sum(revenue) AS revenue,
       count(*) AS days
FROM "MARTS"."DAILY_REVENUE"
WHERE order_date >= '2024-02-01'::DATE AND order_date < '2024-03-01'::DATE
GROUP BY TO_DATE(DATE_TRUNC('MONTH', "ORDER_DATE"));

-- marts.revenue_by_region (revenue_by_region.sql) partitions eu..eu
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "STAGING"."ORDERS"
WHERE region = 'eu'
GROUP BY region;

-- marts.rolling_revenue (rolling_revenue.sql) partitions 2024-01-02..2024-01-02
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM "MARTS"."DAILY_REVENUE" AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= '2023-12-27'::DATE AND d.order_date < '2024-01-03'::DATE
  AND d.order_date + o.n >= '2024-01-02'::DATE AND d.order_date + o.n < '2024-01-03'::DATE
GROUP BY d.order_date + o.n;

-- marts.rolling_revenue (rolling_revenue.sql) partitions 2024-01-01..2024-01-03
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM "MARTS"."DAILY_REVENUE" AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= '2023-12-26'::DATE AND d.order_date < '2024-01-04'::DATE
  AND d.order_date + o.n >= '2024-01-01'::DATE AND d.order_date + o.n < '2024-01-04'::DATE
GROUP BY d.order_date + o.n;

-- staging.orders (orders.sql) partitions 2024-01-02..2024-01-02
SELECT order_id, customer_id, order_date, amount, status, region
FROM "RAW"."ORDERS"
WHERE order_date >= '2024-01-02'::DATE AND order_date < '2024-01-03'::DATE
  AND amount >= 10
  AND status <> 'test';

-- staging.orders (orders.sql) partitions 2024-01-01..2024-01-03
SELECT order_id, customer_id, order_date, amount, status, region
FROM "RAW"."ORDERS"
WHERE order_date >= '2024-01-01'::DATE AND order_date < '2024-01-04'::DATE
  AND amount >= 10
  AND status <> 'test';

