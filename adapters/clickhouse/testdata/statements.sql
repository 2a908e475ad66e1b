-- ledger
CREATE DATABASE IF NOT EXISTS `refill`;
CREATE TABLE IF NOT EXISTS `refill`.`partitions` (
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
CREATE TABLE IF NOT EXISTS `refill`.`runs` (
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
CREATE TABLE IF NOT EXISTS `refill`.`leases` (
  `table_name` String,
  `run_id` String,
  `host` String,
  `pid` Int64,
  `acquired_at` DateTime('UTC'),
  `heartbeat_at` DateTime('UTC'),
  `expires_at` DateTime('UTC'),
  `version` UInt64
) ENGINE = ReplacingMergeTree(`version`) ORDER BY (`table_name`, `run_id`);
CREATE TABLE IF NOT EXISTS `refill`.`versions` (
  `model` String,
  `fingerprint` String,
  `text` String,
  `created_at` DateTime('UTC'),
  `accepted_from` Nullable(String),
  `accepted_at` Nullable(DateTime('UTC')),
  `accepted_partitions` Nullable(Int64),
  `version` UInt64
) ENGINE = ReplacingMergeTree(`version`) ORDER BY (`model`, `fingerprint`);

-- stage a new hourly table
CREATE TABLE `refill_stage`.`marts__daily__a1_1` ENGINE = MergeTree() PARTITION BY toYYYYMMDD(`ts`) ORDER BY `ts` AS SELECT * FROM (
SELECT order_date, count() AS orders
FROM staging.orders
GROUP BY order_date -- a trailing comment
);

-- stage a new daily table
CREATE TABLE `refill_stage`.`marts__daily__a1_1` ENGINE = MergeTree() PARTITION BY toYYYYMM(`order_date`) ORDER BY `order_date` AS SELECT * FROM (
SELECT order_date, count() AS orders
FROM staging.orders
GROUP BY order_date -- a trailing comment
);

-- stage a new weekly table
CREATE TABLE `refill_stage`.`marts__daily__a1_1` ENGINE = MergeTree() PARTITION BY toYYYYMM(`week`) ORDER BY `week` AS SELECT * FROM (
SELECT order_date, count() AS orders
FROM staging.orders
GROUP BY order_date -- a trailing comment
);

-- stage a new yearly table
CREATE TABLE `refill_stage`.`marts__daily__a1_1` ENGINE = MergeTree() PARTITION BY toYear(`year`) ORDER BY `year` AS SELECT * FROM (
SELECT order_date, count() AS orders
FROM staging.orders
GROUP BY order_date -- a trailing comment
);

-- stage a new by_region table
CREATE TABLE `refill_stage`.`marts__daily__a1_1` ENGINE = MergeTree() PARTITION BY `region` ORDER BY `region` AS SELECT * FROM (
SELECT order_date, count() AS orders
FROM staging.orders
GROUP BY order_date -- a trailing comment
);

-- stage a new whole table
CREATE TABLE `refill_stage`.`marts__daily__a1_1` ENGINE = MergeTree() ORDER BY tuple() AS SELECT * FROM (
SELECT order_date, count() AS orders
FROM staging.orders
GROUP BY order_date -- a trailing comment
);

-- stage a new custom table
CREATE TABLE `refill_stage`.`marts__daily__a1_1` ENGINE = ReplacingMergeTree(version) PARTITION BY toYYYYMMDD(order_date) ORDER BY (order_date, customer_id) SETTINGS index_granularity = 1024 AS SELECT * FROM (
SELECT order_date, count() AS orders
FROM staging.orders
GROUP BY order_date -- a trailing comment
);

-- stage into an existing table
CREATE TABLE `refill_stage`.`marts__daily__a1_1` AS `marts`.`daily`;
INSERT INTO `refill_stage`.`marts__daily__a1_1` (`order_date`, `orders`) SELECT `order_date`, `orders` FROM (
SELECT order_date, count() AS orders
FROM staging.orders
GROUP BY order_date -- a trailing comment
);

-- partitions the window touches
SELECT DISTINCT splitByChar('_', _part)[1] FROM `marts`.`daily` WHERE `order_date` >= toDate('2024-01-02') AND `order_date` < toDate('2024-01-05');
SELECT DISTINCT partition_id FROM system.parts WHERE database = 'refill_stage' AND table = 'marts__daily__a1_1' AND active ORDER BY partition_id;

-- swap three days into a monthly partition
CREATE TABLE `refill_stage`.`marts__daily__swap_a1_2` AS `refill_stage`.`marts__daily__a1_1`;
ALTER TABLE `refill_stage`.`marts__daily__swap_a1_2` REPLACE PARTITION ID '202401' FROM `refill_stage`.`marts__daily__a1_1`;
INSERT INTO `refill_stage`.`marts__daily__swap_a1_2` SELECT * FROM `marts`.`daily` WHERE splitByChar('_', _part)[1] IN ('202401') AND NOT ifNull((`order_date` >= toDate('2024-01-02') AND `order_date` < toDate('2024-01-05')), 0);
ALTER TABLE `marts`.`daily` REPLACE PARTITION ID '202401' FROM `refill_stage`.`marts__daily__swap_a1_2`;

-- swap three daily partitions, one of them now empty
CREATE TABLE `refill_stage`.`marts__daily__swap_a1_2` AS `refill_stage`.`marts__daily__a1_1`;
ALTER TABLE `refill_stage`.`marts__daily__swap_a1_2` REPLACE PARTITION ID '20240102' FROM `refill_stage`.`marts__daily__a1_1`, REPLACE PARTITION ID '20240104' FROM `refill_stage`.`marts__daily__a1_1`;
INSERT INTO `refill_stage`.`marts__daily__swap_a1_2` SELECT * FROM `marts`.`daily` WHERE splitByChar('_', _part)[1] IN ('20240102', '20240103', '20240104') AND NOT ifNull((`order_date` >= toDate('2024-01-02') AND `order_date` < toDate('2024-01-05')), 0);
ALTER TABLE `marts`.`daily` REPLACE PARTITION ID '20240102' FROM `refill_stage`.`marts__daily__swap_a1_2`, REPLACE PARTITION ID '20240104' FROM `refill_stage`.`marts__daily__swap_a1_2`, DROP PARTITION ID '20240103';

-- swap an empty stage
CREATE TABLE `refill_stage`.`marts__daily__swap_a1_2` AS `refill_stage`.`marts__daily__a1_1`;
INSERT INTO `refill_stage`.`marts__daily__swap_a1_2` SELECT * FROM `marts`.`daily` WHERE splitByChar('_', _part)[1] IN ('202401') AND NOT ifNull((`order_date` >= toDate('2024-01-02') AND `order_date` < toDate('2024-01-05')), 0);
ALTER TABLE `marts`.`daily` DROP PARTITION ID '202401';

-- partitions an hour touches
SELECT DISTINCT splitByChar('_', _part)[1] FROM `marts`.`daily` WHERE `ts` >= toDateTime('2024-01-05 06:00:00', 'UTC') AND `ts` < toDateTime('2024-01-05 07:00:00', 'UTC');

-- partitions list values touch
SELECT DISTINCT splitByChar('_', _part)[1] FROM `marts`.`daily` WHERE `region` IN ('eu', 'it\'s');

-- swap a whole table
SELECT DISTINCT partition_id FROM system.parts WHERE database = 'marts' AND table = 'daily' AND active ORDER BY partition_id;
ALTER TABLE `marts`.`daily` REPLACE PARTITION ID 'all' FROM `refill_stage`.`marts__daily__a1_1`;

-- ledger records
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'marts.daily' AS `model`, '2024-01-02' AS `partition_key`, 'done' AS `state`, '0123456789abcdef' AS `fingerprint`, 42 AS `row_count`, '20240105T060708Z-abcdef' AS `run_id`, 1 AS `attempts`, toDateTime('2024-01-02 00:00:00', 'UTC') AS `window_start`, toDateTime('2024-01-03 00:00:00', 'UTC') AS `window_end`, toDateTime('2024-01-05 06:07:08', 'UTC') AS `started_at`, toDateTime('2024-01-05 06:07:08', 'UTC') AS `finished_at`, toDateTime('2024-01-05 06:07:08', 'UTC') AS `published_at`, NULL AS `error`, NULL AS `watermark`, 1704434828000001 AS `version`
UNION ALL SELECT 'marts.daily', '2024-01-03', 'done', '0123456789abcdef', 42, '20240105T060708Z-abcdef', 1, toDateTime('2024-01-03 00:00:00', 'UTC'), toDateTime('2024-01-04 00:00:00', 'UTC'), toDateTime('2024-01-05 06:07:08', 'UTC'), toDateTime('2024-01-05 06:07:08', 'UTC'), toDateTime('2024-01-05 06:07:08', 'UTC'), NULL, NULL, 1704434828000002
UNION ALL SELECT 'marts.by_region', 'eu', 'failed', 'f', NULL, 'r', 3, NULL, NULL, toDateTime('2024-01-05 06:07:08', 'UTC'), toDateTime('2024-01-05 06:07:08', 'UTC'), NULL, 'it\'s broken:\n\\ \'quoted\'', NULL, 1704434828000003;

-- run
INSERT INTO `refill`.`runs` (`run_id`, `target`, `status`, `selection`, `host`, `pid`, `started_at`, `finished_at`, `succeeded`, `failed`, `skipped`, `error`, `version`)
SELECT 'r1' AS `run_id`, 'clickhouse' AS `target`, 'running' AS `status`, '{"from":"2024-01-01"}' AS `selection`, 'h' AS `host`, 42 AS `pid`, toDateTime('2024-01-05 06:07:08', 'UTC') AS `started_at`, NULL AS `finished_at`, 0 AS `succeeded`, 0 AS `failed`, 0 AS `skipped`, NULL AS `error`, 1704434828000004 AS `version`;

-- lease
INSERT INTO `refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'marts.daily' AS `table_name`, 'r1' AS `run_id`, 'h' AS `host`, 42 AS `pid`, toDateTime('2024-01-05 06:07:08', 'UTC') AS `acquired_at`, toDateTime('2024-01-05 06:07:08', 'UTC') AS `heartbeat_at`, toDateTime('2024-01-05 06:08:08', 'UTC') AS `expires_at`, 1704434828000005 AS `version`;

-- seed
CREATE TABLE `raw`.`people__refill_seed_a1_3` (`id` Int64, `name` Nullable(String), `score` Float64, `ok` UInt8, `day` Date, `seen` DateTime('UTC')) ENGINE = MergeTree() ORDER BY tuple();
INSERT INTO `raw`.`people__refill_seed_a1_3` (`id`, `name`, `score`, `ok`, `day`, `seen`)
SELECT toInt64(1) AS `id`, 'O\'Brien' AS `name`, toFloat64(1.5) AS `score`, toUInt8(1) AS `ok`, toDate('2024-01-02') AS `day`, toDateTime('2024-01-05 06:07:08', 'UTC') AS `seen`
UNION ALL SELECT toInt64(-2), NULL, toFloat64(2), toUInt8(0), toDate('2024-01-03'), toDateTime('2024-01-05 06:07:08', 'UTC');

-- seed into a new table
RENAME TABLE `raw`.`people__refill_seed_a1_3` TO `raw`.`people`;

-- seed over a table, Ordinary database
RENAME TABLE `raw`.`people` TO `raw`.`people__refill_old_a1_3`, `raw`.`people__refill_seed_a1_3` TO `raw`.`people`;
DROP TABLE IF EXISTS `raw`.`people__refill_old_a1_3`;

-- seed over a table, Atomic database
EXCHANGE TABLES `raw`.`people__refill_seed_a1_3` AND `raw`.`people`;
DROP TABLE IF EXISTS `raw`.`people__refill_seed_a1_3`;

