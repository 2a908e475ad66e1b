-- refill run --target clickhouse --from 2024-01-01 --to 2024-01-03 --now=2024-02-01 --concurrency 1
SELECT version(), (SELECT count() FROM system.settings WHERE name = 'log_comment'), toDateTime('2024-01-02 05:00:00', 'UTC') < toDate('2024-01-03'), (SELECT value FROM system.settings WHERE name = 'readonly'), (SELECT count() FROM system.settings WHERE name = 'max_partitions_per_insert_block'), timezone();
EXISTS TABLE `p_refill`.`leases`;
SELECT DISTINCT table FROM system.columns WHERE database = 'p_refill_stage' AND startsWith(table, '') ORDER BY table;
EXISTS TABLE `p_refill`.`partitions`;
EXISTS TABLE `p_refill`.`versions`;
EXISTS TABLE `p_refill`.`partitions`;
SELECT count() FROM system.tables WHERE database = 'p_refill' AND name IN ('partitions', 'runs', 'leases', 'versions');
CREATE DATABASE IF NOT EXISTS `p_refill`;
CREATE TABLE IF NOT EXISTS `p_refill`.`partitions` (
  `model` String,
  `partition_key` String,
  `state` String,
  `fingerprint` String,
  `row_count` Nullable(Int64),
  `run_id` String,
  `attempts` Int64,
  `window_start` Nullable(DateTime('UTC')),
  `window_end` Nullable(DateTime('UTC')),
  `started_at` DateTime('UTC'),
  `finished_at` DateTime('UTC'),
  `published_at` Nullable(DateTime('UTC')),
  `error` Nullable(String),
  `watermark` Nullable(String),
  `version` UInt64
) ENGINE = ReplacingMergeTree(`version`) ORDER BY (`model`, `partition_key`);
CREATE TABLE IF NOT EXISTS `p_refill`.`runs` (
  `run_id` String,
  `target` String,
  `status` String,
  `selection` String,
  `host` String,
  `pid` Int64,
  `started_at` DateTime('UTC'),
  `finished_at` Nullable(DateTime('UTC')),
  `succeeded` Int64,
  `failed` Int64,
  `skipped` Int64,
  `error` Nullable(String),
  `version` UInt64
) ENGINE = ReplacingMergeTree(`version`) ORDER BY (`run_id`);
CREATE TABLE IF NOT EXISTS `p_refill`.`leases` (
  `table_name` String,
  `run_id` String,
  `host` String,
  `pid` Int64,
  `acquired_at` DateTime('UTC'),
  `heartbeat_at` DateTime('UTC'),
  `expires_at` DateTime('UTC'),
  `version` UInt64
) ENGINE = ReplacingMergeTree(`version`) ORDER BY (`table_name`, `run_id`);
CREATE TABLE IF NOT EXISTS `p_refill`.`versions` (
  `model` String,
  `fingerprint` String,
  `text` String,
  `created_at` DateTime('UTC'),
  `accepted_from` Nullable(String),
  `accepted_at` Nullable(DateTime('UTC')),
  `accepted_partitions` Nullable(Int64),
  `version` UInt64
) ENGINE = ReplacingMergeTree(`version`) ORDER BY (`model`, `fingerprint`);
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.customer_lifetime';
INSERT INTO `p_refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'p_marts.customer_lifetime' AS c0, 'RUN-ID' AS c1, 'HOST' AS c2, PID AS c3, 'NOW' AS c4, 'NOW' AS c5, 'NOW' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.customer_lifetime';
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.customer_revenue_to_date';
INSERT INTO `p_refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'p_marts.customer_revenue_to_date' AS c0, 'RUN-ID' AS c1, 'HOST' AS c2, PID AS c3, 'NOW' AS c4, 'NOW' AS c5, 'NOW' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.customer_revenue_to_date';
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.daily_revenue';
INSERT INTO `p_refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'p_marts.daily_revenue' AS c0, 'RUN-ID' AS c1, 'HOST' AS c2, PID AS c3, 'NOW' AS c4, 'NOW' AS c5, 'NOW' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.daily_revenue';
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.revenue_by_region';
INSERT INTO `p_refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'p_marts.revenue_by_region' AS c0, 'RUN-ID' AS c1, 'HOST' AS c2, PID AS c3, 'NOW' AS c4, 'NOW' AS c5, 'NOW' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.revenue_by_region';
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.rolling_revenue';
INSERT INTO `p_refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'p_marts.rolling_revenue' AS c0, 'RUN-ID' AS c1, 'HOST' AS c2, PID AS c3, 'NOW' AS c4, 'NOW' AS c5, 'NOW' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_marts.rolling_revenue';
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_staging.orders';
INSERT INTO `p_refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'p_staging.orders' AS c0, 'RUN-ID' AS c1, 'HOST' AS c2, PID AS c3, 'NOW' AS c4, 'NOW' AS c5, 'NOW' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `table_name` = 'p_staging.orders';
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE 1 = 1;
SELECT DISTINCT table FROM system.columns WHERE database = 'p_refill_stage' AND startsWith(table, '') ORDER BY table;
INSERT INTO `p_refill`.`runs` (`run_id`, `target`, `status`, `selection`, `host`, `pid`, `started_at`, `finished_at`, `succeeded`, `failed`, `skipped`, `error`, `version`)
SELECT 'RUN-ID' AS c0, 'clickhouse' AS c1, 'running' AS c2, '{"from":"2024-01-01","to":"2024-01-03","now":"2024-02-01T00:00:00Z","shape":{"split_failed":true,"concurrency":1,"retries":2}}' AS c3, 'HOST' AS c4, PID AS c5, 'NOW' AS c6, NULL AS c7, 0 AS c8, 0 AS c9, 0 AS c10, NULL AS c11, c12 FROM system.one ARRAY JOIN
  [MICROS] AS c12;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE 1 = 1;
SELECT `run_id`, `target`, `status`, `selection`, `host`, `pid`, `started_at`, `finished_at`, `succeeded`, `failed`, `skipped`, `error` FROM `p_refill`.`runs` FINAL WHERE 1 = 1 ORDER BY `started_at` DESC, `run_id` DESC LIMIT 100;
SELECT DISTINCT table FROM system.columns WHERE database = 'p_refill_stage' AND startsWith(table, '') ORDER BY table;
SELECT DISTINCT table FROM system.columns WHERE database = 'p_refill_stage' AND startsWith(table, '') ORDER BY table;
SELECT `model`, `fingerprint`, `text`, `created_at`, `accepted_from`, `accepted_at`, `accepted_partitions` FROM `p_refill`.`versions` FINAL WHERE `model` IN ('p_staging.orders', 'p_marts.customer_lifetime', 'p_marts.customer_revenue_to_date', 'p_marts.daily_revenue', 'p_marts.revenue_by_region', 'p_marts.rolling_revenue') ORDER BY `model`, `created_at`;
INSERT INTO `p_refill`.`versions` (`model`, `fingerprint`, `text`, `created_at`, `accepted_from`, `accepted_at`, `accepted_partitions`, `version`)
SELECT c0, c1, c2, c3, NULL AS c4, c5, NULL AS c6, c7 FROM system.one ARRAY JOIN
  ['p_marts.customer_lifetime', 'p_marts.customer_revenue_to_date', 'p_marts.daily_revenue', 'p_marts.revenue_by_region', 'p_marts.rolling_revenue', 'p_staging.orders'] AS c0,
  ['FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT'] AS c1,
  ['model: p_marts.customer_lifetime\ntable: `p_marts`.`customer_lifetime`\ndialect: clickhouse\nref: p_staging.orders -> `p_staging`.`orders`\nsource: p_raw.customers -> `p_raw`.`customers`\n\nSELECT o.customer_id,\n       c.name,\n       count(*) AS orders,\n       sum(o.amount) AS revenue,\n       min(o.order_date) AS first_order\n-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,\n-- whose Distributed tables lose a JOIN\'s alias of them.\nFROM (SELECT customer_id, amount, order_date FROM {{ ref("p_staging.orders") }}) AS o\nJOIN {{ source("p_raw.customers") }} AS c ON c.customer_id = o.customer_id\nGROUP BY o.customer_id, c.name\n', 'model: p_marts.customer_revenue_to_date\ntable: `p_marts`.`customer_revenue_to_date`\ndialect: clickhouse\npartition_by: order_date\ngrain: day\npartition_type: date\ncolumn order_date: date\ncolumn customer_id: bigint\ncolumn orders_to_date: bigint\ncolumn revenue_to_date: double\nref: p_staging.orders -> `p_staging`.`orders`\n\n-- Yesterday\'s totals plus today\'s orders. A UNION ALL keeps this portable:\n-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns\n-- with defaults instead of NULLs.\nSELECT {{ start }} AS order_date,\n       customer_id,\n       sum(orders) AS orders_to_date,\n       sum(revenue) AS revenue_to_date\nFROM (\n  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue\n  FROM {{ ref("p_staging.orders") }}\n  WHERE order_date >= {{ start }} AND order_date < {{ end }}\n  GROUP BY customer_id\n  UNION ALL\n  SELECT customer_id, orders_to_date, revenue_to_date\n  FROM {{ this }}\n  WHERE order_date = {{ date_add(start, -1, "day") }}\n) AS totals\nGROUP BY customer_id\n', 'model: p_marts.daily_revenue\ntable: `p_marts`.`daily_revenue`\ndialect: clickhouse\npartition_by: order_date\ngrain: day\npartition_type: date\nref: p_staging.orders -> `p_staging`.`orders`\n\nSELECT order_date,\n       count(*) AS orders,\n       sum(amount) AS revenue,\n       sum(CASE WHEN status = \'returned\' THEN amount ELSE 0 END) AS returned\nFROM {{ ref("p_staging.orders") }}\nWHERE order_date >= {{ start }} AND order_date < {{ end }}\nGROUP BY order_date\n', 'model: p_marts.revenue_by_region\ntable: `p_marts`.`revenue_by_region`\ndialect: clickhouse\npartition_by: region\nvalues: [eu us apac]\nref: p_staging.orders -> `p_staging`.`orders`\n\nSELECT region, count(*) AS orders, sum(amount) AS revenue\nFROM {{ ref("p_staging.orders") }}\nWHERE region = {{ partition }}\nGROUP BY region\n', 'model: p_marts.rolling_revenue\ntable: `p_marts`.`rolling_revenue`\ndialect: clickhouse\npartition_by: day\ngrain: day\npartition_type: date\nref: daily_revenue -> `p_marts`.`daily_revenue`\n\nSELECT d.order_date + o.n AS day,\n       sum(d.revenue) AS revenue_7d,\n       sum(d.orders) AS orders_7d\nFROM {{ ref("daily_revenue") }} AS d\nCROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3\n            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o\nWHERE d.order_date >= {{ date_add(start, -6, "day") }} AND d.order_date < {{ end }}\n  AND d.order_date + o.n >= {{ start }} AND d.order_date + o.n < {{ end }}\nGROUP BY d.order_date + o.n\n', 'model: p_staging.orders\ntable: `p_staging`.`orders`\ndialect: clickhouse\npartition_by: order_date\ngrain: day\npartition_type: date\nsource: p_raw.orders -> `p_raw`.`orders`\nvar: min_amount = 10\n\nSELECT order_id, customer_id, order_date, amount, status, region\nFROM {{ source("p_raw.orders") }}\nWHERE order_date >= {{ start }} AND order_date < {{ end }}\n  AND amount >= {{ var("min_amount") }}\n  AND status <> \'test\'\n'] AS c2,
  ['NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW'] AS c3,
  [NULL, NULL, NULL, NULL, NULL, NULL] AS c5,
  [MICROS, MICROS, MICROS, MICROS, MICROS, MICROS] AS c7;
EXISTS TABLE `p_staging`.`orders`;
DESCRIBE TABLE (
SELECT order_id, customer_id, order_date, amount, status, region
FROM `p_raw`.`orders`
WHERE order_date >= toDate('2024-01-01') AND order_date < toDate('2024-01-04')
  AND amount >= 10
  AND status <> 'test'
);
CREATE DATABASE IF NOT EXISTS `p_refill_stage`;
CREATE TABLE `p_refill_stage`.`p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400` ENGINE = MergeTree() PARTITION BY toYYYYMM(`order_date`) ORDER BY `order_date` AS SELECT * FROM (
SELECT order_id, customer_id, order_date, amount, status, region
FROM `p_raw`.`orders`
WHERE order_date >= toDate('2024-01-01') AND order_date < toDate('2024-01-04')
  AND amount >= 10
  AND status <> 'test'
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400' AND active;
SELECT `order_date` AS refill_bucket, count(*) AS refill_n, min(`order_date`) AS refill_lo, max(`order_date`) AS refill_hi FROM `p_refill_stage`.`p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400` GROUP BY `order_date`;
SELECT sum(CASE WHEN `order_id` IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN `order_date` IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN `amount` IS NULL THEN 1 ELSE 0 END) FROM `p_refill_stage`.`p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400`;
SELECT `order_id`, count(*) AS refill_n FROM `p_refill_stage`.`p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400` GROUP BY `order_id` HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
SELECT `status`, count(*) AS refill_n FROM `p_refill_stage`.`p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400` WHERE `status` NOT IN ('placed', 'shipped', 'returned') GROUP BY `status` ORDER BY refill_n DESC LIMIT 5;
CREATE DATABASE IF NOT EXISTS `p_staging`;
CREATE TABLE `p_staging`.`orders` AS `p_refill_stage`.`p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400`;
ALTER TABLE `p_staging`.`orders` REPLACE PARTITION ID '202401' FROM `p_refill_stage`.`p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400`;
EXISTS TABLE `p_marts`.`customer_lifetime`;
DESCRIBE TABLE (
SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM `p_staging`.`orders`) AS o
JOIN `p_raw`.`customers` AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name
);
CREATE TABLE `p_refill_stage`.`p_marts__customer_lifetime__s_RUN_XXXXXX55` ENGINE = MergeTree() ORDER BY tuple() AS SELECT * FROM (
SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM `p_staging`.`orders`) AS o
JOIN `p_raw`.`customers` AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name
);
SELECT count(*) FROM `p_refill_stage`.`p_marts__customer_lifetime__s_RUN_XXXXXX55`;
SELECT `customer_id`, count(*) AS refill_n FROM `p_refill_stage`.`p_marts__customer_lifetime__s_RUN_XXXXXX55` GROUP BY `customer_id` HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
CREATE DATABASE IF NOT EXISTS `p_marts`;
CREATE TABLE `p_marts`.`customer_lifetime` AS `p_refill_stage`.`p_marts__customer_lifetime__s_RUN_XXXXXX55`;
EXISTS TABLE `p_marts`.`customer_lifetime`;
SHOW CREATE TABLE `p_marts`.`customer_lifetime`;
DESCRIBE TABLE `p_marts`.`customer_lifetime`;
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_lifetime__s_RUN_XXXXXX55' AND active
UNION ALL SELECT 't', *, toUInt64(0), '', '' FROM (SELECT DISTINCT partition_id FROM system.parts WHERE database = 'p_marts' AND table = 'customer_lifetime' AND active ORDER BY partition_id);
ALTER TABLE `p_marts`.`customer_lifetime` REPLACE PARTITION ID 'all' FROM `p_refill_stage`.`p_marts__customer_lifetime__s_RUN_XXXXXX55`;
EXISTS TABLE `p_marts`.`customer_revenue_to_date`;
CREATE TABLE IF NOT EXISTS `p_marts`.`customer_revenue_to_date` (`order_date` Date, `customer_id` Int64, `orders_to_date` Int64, `revenue_to_date` Float64) ENGINE = MergeTree() PARTITION BY toYYYYMM(`order_date`) ORDER BY `order_date`;
EXISTS TABLE `p_marts`.`customer_revenue_to_date`;
SHOW CREATE TABLE `p_marts`.`customer_revenue_to_date`;
DESCRIBE TABLE `p_marts`.`customer_revenue_to_date`;
DESCRIBE TABLE (
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT toDate('2024-01-01') AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM `p_staging`.`orders`
  WHERE order_date >= toDate('2024-01-01') AND order_date < toDate('2024-01-02')
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM `p_marts`.`customer_revenue_to_date`
  WHERE order_date = toDate('2023-12-31')
) AS totals
GROUP BY customer_id
);
CREATE TABLE `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX72w1704067200x1704153600` ENGINE = MergeTree PARTITION BY toYYYYMM(order_date) ORDER BY order_date SETTINGS index_granularity = 8192 AS SELECT CAST(`order_date` AS Date) AS `order_date`, CAST(`customer_id` AS Int64) AS `customer_id`, CAST(`orders_to_date` AS Int64) AS `orders_to_date`, CAST(`revenue_to_date` AS Float64) AS `revenue_to_date` FROM (
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT toDate('2024-01-01') AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM `p_staging`.`orders`
  WHERE order_date >= toDate('2024-01-01') AND order_date < toDate('2024-01-02')
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM `p_marts`.`customer_revenue_to_date`
  WHERE order_date = toDate('2023-12-31')
) AS totals
GROUP BY customer_id
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__s_RUN_XXXXXX72w1704067200x1704153600' AND active
UNION ALL SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'p_marts' AND table = 'customer_revenue_to_date' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-01') AND min(min_date) < toDate('2024-01-02')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__s_RUN_XXXXXX72w1704067200x1704153600' AND active);
SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'p_marts' AND table = 'customer_revenue_to_date' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-01') AND min(min_date) < toDate('2024-01-02')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__s_RUN_XXXXXX72w1704067200x1704153600' AND active);
ALTER TABLE `p_marts`.`customer_revenue_to_date` REPLACE PARTITION ID '202401' FROM `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX72w1704067200x1704153600`;
CREATE TABLE `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX77w1704153600x1704240000` ENGINE = MergeTree PARTITION BY toYYYYMM(order_date) ORDER BY order_date SETTINGS index_granularity = 8192 AS SELECT CAST(`order_date` AS Date) AS `order_date`, CAST(`customer_id` AS Int64) AS `customer_id`, CAST(`orders_to_date` AS Int64) AS `orders_to_date`, CAST(`revenue_to_date` AS Float64) AS `revenue_to_date` FROM (
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT toDate('2024-01-02') AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM `p_staging`.`orders`
  WHERE order_date >= toDate('2024-01-02') AND order_date < toDate('2024-01-03')
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM `p_marts`.`customer_revenue_to_date`
  WHERE order_date = toDate('2024-01-01')
) AS totals
GROUP BY customer_id
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__s_RUN_XXXXXX77w1704153600x1704240000' AND active
UNION ALL SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'p_marts' AND table = 'customer_revenue_to_date' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-02') AND min(min_date) < toDate('2024-01-03')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__s_RUN_XXXXXX77w1704153600x1704240000' AND active);
CREATE TABLE `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX80` AS `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX77w1704153600x1704240000`;
ALTER TABLE `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX80` REPLACE PARTITION ID '202401' FROM `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX77w1704153600x1704240000`;
INSERT INTO `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX80` SELECT * FROM `p_marts`.`customer_revenue_to_date` WHERE splitByChar('_', _part)[1] IN ('202401') AND NOT ifNull((`order_date` >= toDate('2024-01-02') AND `order_date` < toDate('2024-01-03')), 0);
SELECT DISTINCT partition_id FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__w_RUN_XXXXXX80' AND active ORDER BY partition_id;
ALTER TABLE `p_marts`.`customer_revenue_to_date` REPLACE PARTITION ID '202401' FROM `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX80`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX80`;
CREATE TABLE `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX87w1704240000x1704326400` ENGINE = MergeTree PARTITION BY toYYYYMM(order_date) ORDER BY order_date SETTINGS index_granularity = 8192 AS SELECT CAST(`order_date` AS Date) AS `order_date`, CAST(`customer_id` AS Int64) AS `customer_id`, CAST(`orders_to_date` AS Int64) AS `orders_to_date`, CAST(`revenue_to_date` AS Float64) AS `revenue_to_date` FROM (
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT toDate('2024-01-03') AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM `p_staging`.`orders`
  WHERE order_date >= toDate('2024-01-03') AND order_date < toDate('2024-01-04')
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM `p_marts`.`customer_revenue_to_date`
  WHERE order_date = toDate('2024-01-02')
) AS totals
GROUP BY customer_id
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__s_RUN_XXXXXX87w1704240000x1704326400' AND active
UNION ALL SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'p_marts' AND table = 'customer_revenue_to_date' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-03') AND min(min_date) < toDate('2024-01-04')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__s_RUN_XXXXXX87w1704240000x1704326400' AND active);
CREATE TABLE `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX90` AS `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX87w1704240000x1704326400`;
ALTER TABLE `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX90` REPLACE PARTITION ID '202401' FROM `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX87w1704240000x1704326400`;
INSERT INTO `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX90` SELECT * FROM `p_marts`.`customer_revenue_to_date` WHERE splitByChar('_', _part)[1] IN ('202401') AND NOT ifNull((`order_date` >= toDate('2024-01-03') AND `order_date` < toDate('2024-01-04')), 0);
SELECT DISTINCT partition_id FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__customer_revenue_to_date__w_RUN_XXXXXX90' AND active ORDER BY partition_id;
ALTER TABLE `p_marts`.`customer_revenue_to_date` REPLACE PARTITION ID '202401' FROM `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX90`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__customer_revenue_to_date__w_RUN_XXXXXX90`;
EXISTS TABLE `p_marts`.`daily_revenue`;
DESCRIBE TABLE (
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM `p_staging`.`orders`
WHERE order_date >= toDate('2024-01-01') AND order_date < toDate('2024-01-04')
GROUP BY order_date
);
CREATE TABLE `p_refill_stage`.`p_marts__daily_revenue__s_RUN_XXXXXX99w1704067200x1704326400` ENGINE = MergeTree() PARTITION BY toYYYYMM(`order_date`) ORDER BY `order_date` AS SELECT * FROM (
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM `p_staging`.`orders`
WHERE order_date >= toDate('2024-01-01') AND order_date < toDate('2024-01-04')
GROUP BY order_date
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__daily_revenue__s_RUN_XXXXXX99w1704067200x1704326400' AND active;
SELECT `order_date` AS refill_bucket, count(*) AS refill_n, min(`order_date`) AS refill_lo, max(`order_date`) AS refill_hi FROM `p_refill_stage`.`p_marts__daily_revenue__s_RUN_XXXXXX99w1704067200x1704326400` GROUP BY `order_date`;
SELECT sum(CASE WHEN `order_date` IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN `revenue` IS NULL THEN 1 ELSE 0 END) FROM `p_refill_stage`.`p_marts__daily_revenue__s_RUN_XXXXXX99w1704067200x1704326400`;
SELECT `order_date`, count(*) AS refill_n FROM `p_refill_stage`.`p_marts__daily_revenue__s_RUN_XXXXXX99w1704067200x1704326400` GROUP BY `order_date` HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
CREATE TABLE `p_marts`.`daily_revenue` AS `p_refill_stage`.`p_marts__daily_revenue__s_RUN_XXXXXX99w1704067200x1704326400`;
ALTER TABLE `p_marts`.`daily_revenue` REPLACE PARTITION ID '202401' FROM `p_refill_stage`.`p_marts__daily_revenue__s_RUN_XXXXXX99w1704067200x1704326400`;
EXISTS TABLE `p_marts`.`revenue_by_region`;
DESCRIBE TABLE (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM `p_staging`.`orders`
WHERE region = 'eu'
GROUP BY region
);
CREATE TABLE `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX109` ENGINE = MergeTree() PARTITION BY `region` ORDER BY `region` AS SELECT * FROM (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM `p_staging`.`orders`
WHERE region = 'eu'
GROUP BY region
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__revenue_by_region__s_RUN_XXXXXX109' AND active;
SELECT `region` AS refill_bucket, count(*) AS refill_n, min(`region`) AS refill_lo, max(`region`) AS refill_hi FROM `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX109` GROUP BY `region`;
CREATE TABLE `p_marts`.`revenue_by_region` AS `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX109`;
ALTER TABLE `p_marts`.`revenue_by_region` REPLACE PARTITION ID '6723087e83ca1d71525b3a74c779f913' FROM `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX109`;
EXISTS TABLE `p_marts`.`revenue_by_region`;
SHOW CREATE TABLE `p_marts`.`revenue_by_region`;
DESCRIBE TABLE `p_marts`.`revenue_by_region`;
DESCRIBE TABLE (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM `p_staging`.`orders`
WHERE region = 'us'
GROUP BY region
);
CREATE TABLE `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX119` ENGINE = MergeTree PARTITION BY region ORDER BY region SETTINGS index_granularity = 8192 AS SELECT CAST(`region` AS String) AS `region`, CAST(`orders` AS UInt64) AS `orders`, CAST(`revenue` AS Float64) AS `revenue` FROM (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM `p_staging`.`orders`
WHERE region = 'us'
GROUP BY region
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__revenue_by_region__s_RUN_XXXXXX119' AND active
UNION ALL SELECT 't', *, toUInt64(0), '', '' FROM (SELECT DISTINCT splitByChar('_', _part)[1] FROM `p_marts`.`revenue_by_region` WHERE `region` IN ('us'));
SELECT `region` AS refill_bucket, count(*) AS refill_n, min(`region`) AS refill_lo, max(`region`) AS refill_hi FROM `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX119` GROUP BY `region`;
ALTER TABLE `p_marts`.`revenue_by_region` REPLACE PARTITION ID 'b6c6e95b00c9f75052f43b4b84b86fd7' FROM `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX119`;
DESCRIBE TABLE (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM `p_staging`.`orders`
WHERE region = 'apac'
GROUP BY region
);
CREATE TABLE `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX125` ENGINE = MergeTree PARTITION BY region ORDER BY region SETTINGS index_granularity = 8192 AS SELECT CAST(`region` AS String) AS `region`, CAST(`orders` AS UInt64) AS `orders`, CAST(`revenue` AS Float64) AS `revenue` FROM (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM `p_staging`.`orders`
WHERE region = 'apac'
GROUP BY region
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__revenue_by_region__s_RUN_XXXXXX125' AND active
UNION ALL SELECT 't', *, toUInt64(0), '', '' FROM (SELECT DISTINCT splitByChar('_', _part)[1] FROM `p_marts`.`revenue_by_region` WHERE `region` IN ('apac'));
SELECT `region` AS refill_bucket, count(*) AS refill_n, min(`region`) AS refill_lo, max(`region`) AS refill_hi FROM `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX125` GROUP BY `region`;
ALTER TABLE `p_marts`.`revenue_by_region` REPLACE PARTITION ID 'a1abb4f474b18a84e6a7e28bfa45882e' FROM `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX125`;
EXISTS TABLE `p_marts`.`rolling_revenue`;
DESCRIBE TABLE (
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM `p_marts`.`daily_revenue` AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= toDate('2023-12-26') AND d.order_date < toDate('2024-01-04')
  AND d.order_date + o.n >= toDate('2024-01-01') AND d.order_date + o.n < toDate('2024-01-04')
GROUP BY d.order_date + o.n
);
CREATE TABLE `p_refill_stage`.`p_marts__rolling_revenue__s_RUN_XXXXXX132w1704067200x1704326400` ENGINE = MergeTree() PARTITION BY toYYYYMM(`day`) ORDER BY `day` AS SELECT * FROM (
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM `p_marts`.`daily_revenue` AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= toDate('2023-12-26') AND d.order_date < toDate('2024-01-04')
  AND d.order_date + o.n >= toDate('2024-01-01') AND d.order_date + o.n < toDate('2024-01-04')
GROUP BY d.order_date + o.n
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'p_refill_stage' AND table = 'p_marts__rolling_revenue__s_RUN_XXXXXX132w1704067200x1704326400' AND active;
SELECT `day` AS refill_bucket, count(*) AS refill_n, min(`day`) AS refill_lo, max(`day`) AS refill_hi FROM `p_refill_stage`.`p_marts__rolling_revenue__s_RUN_XXXXXX132w1704067200x1704326400` GROUP BY `day`;
CREATE TABLE `p_marts`.`rolling_revenue` AS `p_refill_stage`.`p_marts__rolling_revenue__s_RUN_XXXXXX132w1704067200x1704326400`;
ALTER TABLE `p_marts`.`rolling_revenue` REPLACE PARTITION ID '202401' FROM `p_refill_stage`.`p_marts__rolling_revenue__s_RUN_XXXXXX132w1704067200x1704326400`;
INSERT INTO `p_refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT c0, c1, 'done' AS c2, c3, c4, 'RUN-ID' AS c5, 1 AS c6, c7, c8, c9, c10, c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  ['p_staging.orders', 'p_staging.orders', 'p_staging.orders', 'p_marts.customer_lifetime', 'p_marts.customer_revenue_to_date', 'p_marts.customer_revenue_to_date', 'p_marts.customer_revenue_to_date', 'p_marts.daily_revenue', 'p_marts.daily_revenue', 'p_marts.daily_revenue', 'p_marts.revenue_by_region', 'p_marts.revenue_by_region', 'p_marts.revenue_by_region', 'p_marts.rolling_revenue', 'p_marts.rolling_revenue', 'p_marts.rolling_revenue'] AS c0,
  ['2024-01-01', '2024-01-02', '2024-01-03', 'all', '2024-01-01', '2024-01-02', '2024-01-03', '2024-01-01', '2024-01-02', '2024-01-03', 'eu', 'us', 'apac', '2024-01-01', '2024-01-02', '2024-01-03'] AS c1,
  ['FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT', 'FINGERPRINT'] AS c3,
  [30, 27, 25, 71, 28, 51, 71, 1, 1, 1, 1, 1, 1, 1, 1, 1] AS c4,
  ['2024-01-01 00:00:00', '2024-01-02 00:00:00', '2024-01-03 00:00:00', NULL, '2024-01-01 00:00:00', '2024-01-02 00:00:00', '2024-01-03 00:00:00', '2024-01-01 00:00:00', '2024-01-02 00:00:00', '2024-01-03 00:00:00', NULL, NULL, NULL, '2024-01-01 00:00:00', '2024-01-02 00:00:00', '2024-01-03 00:00:00'] AS c7,
  ['2024-01-02 00:00:00', '2024-01-03 00:00:00', '2024-01-04 00:00:00', '2024-01-04 00:00:00', '2024-01-02 00:00:00', '2024-01-03 00:00:00', '2024-01-04 00:00:00', '2024-01-02 00:00:00', '2024-01-03 00:00:00', '2024-01-04 00:00:00', '2024-01-04 00:00:00', '2024-01-04 00:00:00', '2024-01-04 00:00:00', '2024-01-02 00:00:00', '2024-01-03 00:00:00', '2024-01-04 00:00:00'] AS c8,
  ['NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW'] AS c9,
  ['NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW'] AS c10,
  ['NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW'] AS c11,
  [MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS, MICROS] AS c14;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__customer_lifetime__s_RUN_XXXXXX55`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX72w1704067200x1704153600`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX77w1704153600x1704240000`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__customer_revenue_to_date__s_RUN_XXXXXX87w1704240000x1704326400`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__daily_revenue__s_RUN_XXXXXX99w1704067200x1704326400`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX109`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX119`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__revenue_by_region__s_RUN_XXXXXX125`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_marts__rolling_revenue__s_RUN_XXXXXX132w1704067200x1704326400`;
DROP TABLE IF EXISTS `p_refill_stage`.`p_staging__orders__s_RUN_XXXXXX43w1704067200x1704326400`;
INSERT INTO `p_refill`.`runs` (`run_id`, `target`, `status`, `selection`, `host`, `pid`, `started_at`, `finished_at`, `succeeded`, `failed`, `skipped`, `error`, `version`)
SELECT 'RUN-ID' AS c0, 'clickhouse' AS c1, 'succeeded' AS c2, '{"from":"2024-01-01","to":"2024-01-03","now":"2024-02-01T00:00:00Z","shape":{"split_failed":true,"concurrency":1,"retries":2}}' AS c3, 'HOST' AS c4, PID AS c5, 'NOW' AS c6, 'NOW' AS c7, 16 AS c8, 0 AS c9, 0 AS c10, NULL AS c11, c12 FROM system.one ARRAY JOIN
  [MICROS] AS c12;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `p_refill`.`leases` FINAL WHERE `run_id` = 'RUN-ID';
INSERT INTO `p_refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT c0, 'RUN-ID' AS c1, 'HOST' AS c2, PID AS c3, c4, c5, c6, c7 FROM system.one ARRAY JOIN
  ['p_marts.customer_lifetime', 'p_marts.customer_revenue_to_date', 'p_marts.daily_revenue', 'p_marts.revenue_by_region', 'p_marts.rolling_revenue', 'p_staging.orders'] AS c0,
  ['NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW'] AS c4,
  ['NOW', 'NOW', 'NOW', 'NOW', 'NOW', 'NOW'] AS c5,
  ['1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00', '1970-01-01 00:00:00'] AS c6,
  [MICROS, MICROS, MICROS, MICROS, MICROS, MICROS] AS c7;

