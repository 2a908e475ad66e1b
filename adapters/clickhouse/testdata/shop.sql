-- marts.customer_lifetime (customer_lifetime.sql) partitions all..all
SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM `staging`.`orders`) AS o
JOIN `raw`.`customers` AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name;

-- marts.customer_revenue_to_date (customer_revenue_to_date.sql) partitions 2024-01-02..2024-01-02
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT toDate('2024-01-02') AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM `staging`.`orders`
  WHERE order_date >= toDate('2024-01-02') AND order_date < toDate('2024-01-03')
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM `marts`.`customer_revenue_to_date`
  WHERE order_date = toDate('2024-01-01')
) AS totals
GROUP BY customer_id;

-- marts.daily_revenue (daily_revenue.sql) partitions 2024-01-02..2024-01-02
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM `staging`.`orders`
WHERE order_date >= toDate('2024-01-02') AND order_date < toDate('2024-01-03')
GROUP BY order_date;

-- marts.daily_revenue (daily_revenue.sql) partitions 2024-01-01..2024-01-03
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM `staging`.`orders`
WHERE order_date >= toDate('2024-01-01') AND order_date < toDate('2024-01-04')
GROUP BY order_date;

-- marts.monthly_revenue (monthly_revenue.sql) partitions 2024-02..2024-02
SELECT toDate(toStartOfMonth(`order_date`)) AS month_start,
       sum(orders) AS orders,
       sum(revenue) AS revenue,
       count(*) AS days
FROM `marts`.`daily_revenue`
WHERE order_date >= toDate('2024-02-01') AND order_date < toDate('2024-03-01')
GROUP BY toDate(toStartOfMonth(`order_date`));

-- marts.revenue_by_region (revenue_by_region.sql) partitions eu..eu
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM `staging`.`orders`
WHERE region = 'eu'
GROUP BY region;

-- marts.rolling_revenue (rolling_revenue.sql) partitions 2024-01-02..2024-01-02
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM `marts`.`daily_revenue` AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= toDate('2023-12-27') AND d.order_date < toDate('2024-01-03')
  AND d.order_date + o.n >= toDate('2024-01-02') AND d.order_date + o.n < toDate('2024-01-03')
GROUP BY d.order_date + o.n;

-- marts.rolling_revenue (rolling_revenue.sql) partitions 2024-01-01..2024-01-03
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM `marts`.`daily_revenue` AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= toDate('2023-12-26') AND d.order_date < toDate('2024-01-04')
  AND d.order_date + o.n >= toDate('2024-01-01') AND d.order_date + o.n < toDate('2024-01-04')
GROUP BY d.order_date + o.n;

-- staging.orders (orders.sql) partitions 2024-01-02..2024-01-02
SELECT order_id, customer_id, order_date, amount, status, region
FROM `raw`.`orders`
WHERE order_date >= toDate('2024-01-02') AND order_date < toDate('2024-01-03')
  AND amount >= 10
  AND status <> 'test';

-- staging.orders (orders.sql) partitions 2024-01-01..2024-01-03
SELECT order_id, customer_id, order_date, amount, status, region
FROM `raw`.`orders`
WHERE order_date >= toDate('2024-01-01') AND order_date < toDate('2024-01-04')
  AND amount >= 10
  AND status <> 'test';

