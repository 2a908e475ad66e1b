-- open
SELECT version(), (SELECT count() FROM system.settings WHERE name = 'log_comment'), toDateTime('2024-01-02 05:00:00', 'UTC') < toDate('2024-01-03'), (SELECT value FROM system.settings WHERE name = 'readonly'), (SELECT count() FROM system.settings WHERE name = 'max_partitions_per_insert_block'), timezone();

-- set up the ledger
SELECT count() FROM system.tables WHERE database = 'refill' AND name IN ('partitions', 'runs', 'leases', 'versions');
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

-- load a seed
CREATE DATABASE IF NOT EXISTS `shop`;
SELECT DISTINCT table FROM system.columns WHERE database = 'shop' AND startsWith(table, 'events__refill_') ORDER BY table;
CREATE TABLE `shop`.`events__refill_seed_XXXXXX10` (`d` Date, `ts` DateTime('UTC'), `region` String, `v` Int64) ENGINE = MergeTree() ORDER BY tuple();
INSERT INTO `shop`.`events__refill_seed_XXXXXX10` (`d`, `ts`, `region`, `v`)
SELECT toDate('2024-01-02') AS `d`, toDateTime('2024-01-02 03:00:00', 'UTC') AS `ts`, 'eu' AS `region`, toInt64(1) AS `v`
UNION ALL SELECT toDate('2024-01-03'), toDateTime('2024-01-03 04:00:00', 'UTC'), 'us', toInt64(2)
UNION ALL SELECT toDate('2024-01-04'), toDateTime('2024-01-04 04:00:00', 'UTC'), 'it\'s', toInt64(3);
EXISTS TABLE `shop`.`events`;
SELECT engine FROM system.databases WHERE name = 'shop';
RENAME TABLE `shop`.`events__refill_seed_XXXXXX10` TO `shop`.`events`;

-- take the lease of a table
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `refill`.`leases` FINAL WHERE `table_name` = 'shop.daily';
INSERT INTO `refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'shop.daily' AS c0, '20240105T060708Z-abcdef' AS c1, 'host' AS c2, 42 AS c3, '2024-01-05 06:07:08' AS c4, '2024-01-05 06:07:08' AS c5, '2024-01-05 06:08:08' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `refill`.`leases` FINAL WHERE `table_name` = 'shop.daily';

-- describe a query and a table that does not exist
DESCRIBE TABLE (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03') GROUP BY `d`
);
EXISTS TABLE `shop`.`daily`;

-- create a table with declared columns
CREATE TABLE IF NOT EXISTS `shop`.`declared` (`d` Date, `v` Int64) ENGINE = MergeTree() PARTITION BY toYYYYMM(`d`) ORDER BY `d`;

-- stage, check and publish a day into a new table
CREATE DATABASE IF NOT EXISTS `refill_stage`;
CREATE TABLE `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX23w1704153600x1704240000` ENGINE = MergeTree() PARTITION BY toYYYYMM(`d`) ORDER BY `d` AS SELECT * FROM (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03') GROUP BY `d`
);
SELECT `d` AS k, count(*) AS n FROM `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX23w1704153600x1704240000` GROUP BY `d`;
CREATE TABLE `shop`.`daily` AS `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX23w1704153600x1704240000`;
EXISTS TABLE `shop`.`daily`;
SHOW CREATE TABLE `shop`.`daily`;
DESCRIBE TABLE `shop`.`daily`;
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX23w1704153600x1704240000' AND active
UNION ALL SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'shop' AND table = 'daily' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-02') AND min(min_date) < toDate('2024-01-03')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX23w1704153600x1704240000' AND active);
ALTER TABLE `shop`.`daily` REPLACE PARTITION ID '202401' FROM `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX23w1704153600x1704240000`;
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'daily' AS c0, '2024-01-02' AS c1, 'done' AS c2, '0123456789abcdef' AS c3, 1 AS c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, '2024-01-02 00:00:00' AS c7, '2024-01-03 00:00:00' AS c8, '2024-01-05 06:07:08' AS c9, '2024-01-05 06:07:09' AS c10, '2024-01-05 06:07:09' AS c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  [MICROS] AS c14;
DROP TABLE IF EXISTS `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX23w1704153600x1704240000`;

-- stage and publish a batch of three days
DESCRIBE TABLE (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-05') GROUP BY `d`
);
CREATE TABLE `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX35w1704153600x1704412800` ENGINE = MergeTree PARTITION BY toYYYYMM(d) ORDER BY d SETTINGS index_granularity = 8192 AS SELECT CAST(`d` AS Date) AS `d`, CAST(`v` AS Int64) AS `v` FROM (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-05') GROUP BY `d`
);
SELECT `d` AS k, count(*) AS n FROM `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX35w1704153600x1704412800` GROUP BY `d`;
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX35w1704153600x1704412800' AND active
UNION ALL SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'shop' AND table = 'daily' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-02') AND min(min_date) < toDate('2024-01-05')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX35w1704153600x1704412800' AND active);
SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'shop' AND table = 'daily' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-02') AND min(min_date) < toDate('2024-01-05')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX35w1704153600x1704412800' AND active);
ALTER TABLE `shop`.`daily` REPLACE PARTITION ID '202401' FROM `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX35w1704153600x1704412800`;
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'daily' AS c0, c1, 'done' AS c2, '0123456789abcdef' AS c3, c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, c7, c8, c9, c10, c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  ['2024-01-02', '2024-01-03', '2024-01-04'] AS c1,
  [1, 2, 3] AS c4,
  ['2024-01-02 00:00:00', '2024-01-03 00:00:00', '2024-01-04 00:00:00'] AS c7,
  ['2024-01-03 00:00:00', '2024-01-04 00:00:00', '2024-01-05 00:00:00'] AS c8,
  ['2024-01-05 06:07:08', '2024-01-05 06:07:08', '2024-01-05 06:07:08'] AS c9,
  ['2024-01-05 06:07:09', '2024-01-05 06:07:09', '2024-01-05 06:07:09'] AS c10,
  ['2024-01-05 06:07:09', '2024-01-05 06:07:09', '2024-01-05 06:07:09'] AS c11,
  [MICROS, MICROS, MICROS] AS c14;
DROP TABLE IF EXISTS `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX35w1704153600x1704412800`;

-- stage and publish an hour
EXISTS TABLE `shop`.`hourly`;
DESCRIBE TABLE (
SELECT `ts`, `v` FROM `shop`.`events` WHERE `ts` >= toDateTime('2024-01-02 03:00:00', 'UTC') AND `ts` < toDateTime('2024-01-02 04:00:00', 'UTC')
);
CREATE TABLE `refill_stage`.`shop__hourly__s_20240105t060708zabcdef_XXXXXX45w1704164400x1704168000` ENGINE = MergeTree() PARTITION BY toYYYYMMDD(`ts`) ORDER BY `ts` AS SELECT * FROM (
SELECT `ts`, `v` FROM `shop`.`events` WHERE `ts` >= toDateTime('2024-01-02 03:00:00', 'UTC') AND `ts` < toDateTime('2024-01-02 04:00:00', 'UTC')
);
SELECT `ts` AS k, count(*) AS n FROM `refill_stage`.`shop__hourly__s_20240105t060708zabcdef_XXXXXX45w1704164400x1704168000` GROUP BY `ts`;
CREATE TABLE `shop`.`hourly` AS `refill_stage`.`shop__hourly__s_20240105t060708zabcdef_XXXXXX45w1704164400x1704168000`;
EXISTS TABLE `shop`.`hourly`;
SHOW CREATE TABLE `shop`.`hourly`;
DESCRIBE TABLE `shop`.`hourly`;
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_time) AS lo, toString(max_time) AS hi FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__hourly__s_20240105t060708zabcdef_XXXXXX45w1704164400x1704168000' AND active
UNION ALL SELECT 't', partition_id, sum(rows), toString(min(min_time)), toString(max(max_time)) FROM system.parts WHERE database = 'shop' AND table = 'hourly' AND active GROUP BY partition_id HAVING (max(max_time) >= toDateTime('2024-01-02 03:00:00', 'UTC') AND min(min_time) < toDateTime('2024-01-02 04:00:00', 'UTC')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__hourly__s_20240105t060708zabcdef_XXXXXX45w1704164400x1704168000' AND active);
ALTER TABLE `shop`.`hourly` REPLACE PARTITION ID '20240102' FROM `refill_stage`.`shop__hourly__s_20240105t060708zabcdef_XXXXXX45w1704164400x1704168000`;
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'hourly' AS c0, '2024-01-02T03' AS c1, 'done' AS c2, '0123456789abcdef' AS c3, 1 AS c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, '2024-01-02 03:00:00' AS c7, '2024-01-02 04:00:00' AS c8, '2024-01-05 06:07:08' AS c9, '2024-01-05 06:07:09' AS c10, '2024-01-05 06:07:09' AS c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  [MICROS] AS c14;
DROP TABLE IF EXISTS `refill_stage`.`shop__hourly__s_20240105t060708zabcdef_XXXXXX45w1704164400x1704168000`;

-- stage and publish list values
EXISTS TABLE `shop`.`by_region`;
DESCRIBE TABLE (
SELECT `region`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `region` IN ('eu', 'it\'s') GROUP BY `region`
);
CREATE TABLE `refill_stage`.`shop__by_region__s_20240105t060708zabcdef_XXXXXX58` ENGINE = MergeTree() PARTITION BY `region` ORDER BY `region` AS SELECT * FROM (
SELECT `region`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `region` IN ('eu', 'it\'s') GROUP BY `region`
);
SELECT `region` AS k, count(*) AS n FROM `refill_stage`.`shop__by_region__s_20240105t060708zabcdef_XXXXXX58` GROUP BY `region`;
CREATE TABLE `shop`.`by_region` AS `refill_stage`.`shop__by_region__s_20240105t060708zabcdef_XXXXXX58`;
EXISTS TABLE `shop`.`by_region`;
SHOW CREATE TABLE `shop`.`by_region`;
DESCRIBE TABLE `shop`.`by_region`;
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__by_region__s_20240105t060708zabcdef_XXXXXX58' AND active
UNION ALL SELECT 't', *, toUInt64(0), '', '' FROM (SELECT DISTINCT splitByChar('_', _part)[1] FROM `shop`.`by_region` WHERE `region` IN ('eu', 'it\'s'));
ALTER TABLE `shop`.`by_region` REPLACE PARTITION ID '6723087e83ca1d71525b3a74c779f913' FROM `refill_stage`.`shop__by_region__s_20240105t060708zabcdef_XXXXXX58`, REPLACE PARTITION ID 'de8077ca66b7d4c91dec24170dce4d53' FROM `refill_stage`.`shop__by_region__s_20240105t060708zabcdef_XXXXXX58`;
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'by_region' AS c0, c1, 'done' AS c2, '0123456789abcdef' AS c3, 1 AS c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, c7, c8, c9, c10, c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  ['eu', 'it\'s'] AS c1,
  [NULL, NULL] AS c7,
  [NULL, NULL] AS c8,
  ['2024-01-05 06:07:08', '2024-01-05 06:07:08'] AS c9,
  ['2024-01-05 06:07:09', '2024-01-05 06:07:09'] AS c10,
  ['2024-01-05 06:07:09', '2024-01-05 06:07:09'] AS c11,
  [MICROS, MICROS] AS c14;
DROP TABLE IF EXISTS `refill_stage`.`shop__by_region__s_20240105t060708zabcdef_XXXXXX58`;

-- stage and publish a whole table
EXISTS TABLE `shop`.`totals`;
DESCRIBE TABLE (
SELECT count(*) AS `events`, sum(`v`) AS `v` FROM `shop`.`events`
);
CREATE TABLE `refill_stage`.`shop__totals__s_20240105t060708zabcdef_XXXXXX71` ENGINE = MergeTree() ORDER BY tuple() AS SELECT * FROM (
SELECT count(*) AS `events`, sum(`v`) AS `v` FROM `shop`.`events`
);
SELECT 1 AS k, count(*) AS n FROM `refill_stage`.`shop__totals__s_20240105t060708zabcdef_XXXXXX71` GROUP BY 1;
CREATE TABLE `shop`.`totals` AS `refill_stage`.`shop__totals__s_20240105t060708zabcdef_XXXXXX71`;
EXISTS TABLE `shop`.`totals`;
SHOW CREATE TABLE `shop`.`totals`;
DESCRIBE TABLE `shop`.`totals`;
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__totals__s_20240105t060708zabcdef_XXXXXX71' AND active
UNION ALL SELECT 't', *, toUInt64(0), '', '' FROM (SELECT DISTINCT partition_id FROM system.parts WHERE database = 'shop' AND table = 'totals' AND active ORDER BY partition_id);
ALTER TABLE `shop`.`totals` REPLACE PARTITION ID 'all' FROM `refill_stage`.`shop__totals__s_20240105t060708zabcdef_XXXXXX71`;
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'totals' AS c0, 'all' AS c1, 'done' AS c2, '0123456789abcdef' AS c3, 1 AS c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, NULL AS c7, NULL AS c8, '2024-01-05 06:07:08' AS c9, '2024-01-05 06:07:09' AS c10, '2024-01-05 06:07:09' AS c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  [MICROS] AS c14;

-- summarize a stage from the warehouse's metadata
CREATE TABLE `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX81w1704153600x1704412800` ENGINE = MergeTree PARTITION BY toYYYYMM(d) ORDER BY d SETTINGS index_granularity = 8192 AS SELECT CAST(`d` AS Date) AS `d`, CAST(`v` AS Int64) AS `v` FROM (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-05') GROUP BY `d`
);
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX81w1704153600x1704412800' AND active
UNION ALL SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'shop' AND table = 'daily' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-02') AND min(min_date) < toDate('2024-01-05')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX81w1704153600x1704412800' AND active);
DROP TABLE IF EXISTS `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX81w1704153600x1704412800`;

-- diff a query with a day of a table, by key and whole
SELECT countIf(o_in = 1 AND n_in = 0),
  countIf(o_in = 0 AND n_in = 1),
  countIf(o_in = 1 AND n_in = 1 AND refill_differs),
  countIf(o_in = 1 AND n_in = 1 AND NOT refill_differs),
  toFloat64(sumIf(o_c1, o_in = 1)),
  toFloat64(sumIf(n_c1, n_in = 1)),
  groupArrayIf(2)([toString(o_c0), toString(o_c1)], o_in = 1 AND n_in = 0),
  groupArrayIf(2)([toString(n_c0), toString(n_c1)], o_in = 0 AND n_in = 1),
  groupArrayIf(2)([toString(o_c0), toString(o_c1), toString(n_c0), toString(n_c1)], o_in = 1 AND n_in = 1 AND refill_differs)
FROM (
  SELECT o_in, n_in, o_c0, n_c0, o_c1, n_c1, (ifNull(o_c1 != n_c1, isNull(o_c1) != isNull(n_c1))) AS refill_differs
  FROM (SELECT 1 AS o_in, `d` AS refill_k0, `d` AS o_c0, `v` AS o_c1 FROM `shop`.`daily` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03')) AS refill_old
  ALL FULL OUTER JOIN (SELECT 1 AS n_in, `d` AS refill_k0, `d` AS n_c0, `v` AS n_c1 FROM (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03') GROUP BY `d`
) AS refill_query) AS refill_new
  USING (refill_k0)
);
SELECT sumIf(o_n - n_n, o_n > n_n),
  sumIf(n_n - o_n, n_n > o_n),
  0,
  sum(least(o_n, n_n)),
  toFloat64(sumIf(o_c1 * o_n, o_n > 0)),
  toFloat64(sumIf(n_c1 * n_n, n_n > 0)),
  groupArrayIf(2)([toString(o_c0), toString(o_c1)], o_n > n_n),
  groupArrayIf(2)([toString(n_c0), toString(n_c1)], n_n > o_n),
  groupArrayIf(2)([toString(o_c0), toString(o_c1), toString(n_c0), toString(n_c1)], 0)
FROM (
  SELECT o_n, n_n, o_c0, n_c0, o_c1, n_c1
  FROM (SELECT refill_r0 AS refill_k0, refill_r1 AS refill_k1, refill_r0 AS o_c0, refill_r1 AS o_c1, o_n FROM (SELECT `d` AS refill_r0, `v` AS refill_r1, count() AS o_n FROM `shop`.`daily` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03') GROUP BY refill_r0, refill_r1)) AS refill_old
  ALL FULL OUTER JOIN (SELECT refill_r0 AS refill_k0, refill_r1 AS refill_k1, refill_r0 AS n_c0, refill_r1 AS n_c1, n_n FROM (SELECT `d` AS refill_r0, `v` AS refill_r1, count() AS n_n FROM (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03') GROUP BY `d`
) AS refill_query GROUP BY refill_r0, refill_r1)) AS refill_new
  USING (refill_k0, refill_k1)
);

-- publish a day that adds a column
DESCRIBE TABLE (
SELECT `d`, sum(`v`) AS `v`, count(*) AS `n` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03') GROUP BY `d`
);
CREATE TABLE `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX88w1704153600x1704240000` AS `shop`.`daily`;
ALTER TABLE `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX88w1704153600x1704240000` ADD COLUMN `n` UInt64;
INSERT INTO `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX88w1704153600x1704240000` (`d`, `v`, `n`) SELECT `d`, `v`, `n` FROM (
SELECT `d`, sum(`v`) AS `v`, count(*) AS `n` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03') GROUP BY `d`
);
ALTER TABLE `shop`.`daily` ADD COLUMN `n` UInt64;
EXISTS TABLE `shop`.`daily`;
SHOW CREATE TABLE `shop`.`daily`;
DESCRIBE TABLE `shop`.`daily`;
SELECT 's' AS kind, partition_id AS id, rows AS n, toString(min_date) AS lo, toString(max_date) AS hi FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX88w1704153600x1704240000' AND active
UNION ALL SELECT 't', partition_id, sum(rows), toString(min(min_date)), toString(max(max_date)) FROM system.parts WHERE database = 'shop' AND table = 'daily' AND active GROUP BY partition_id HAVING (max(max_date) >= toDate('2024-01-02') AND min(min_date) < toDate('2024-01-03')) OR partition_id IN (SELECT partition_id FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__s_20240105t060708zabcdef_XXXXXX88w1704153600x1704240000' AND active);
CREATE TABLE `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX97` AS `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX88w1704153600x1704240000`;
ALTER TABLE `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX97` REPLACE PARTITION ID '202401' FROM `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX88w1704153600x1704240000`;
INSERT INTO `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX97` SELECT * FROM `shop`.`daily` WHERE splitByChar('_', _part)[1] IN ('202401') AND NOT ifNull((`d` >= toDate('2024-01-02') AND `d` < toDate('2024-01-03')), 0);
SELECT DISTINCT partition_id FROM system.parts WHERE database = 'refill_stage' AND table = 'shop__daily__w_20240105t060708zabcdef_XXXXXX97' AND active ORDER BY partition_id;
ALTER TABLE `shop`.`daily` REPLACE PARTITION ID '202401' FROM `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX97`;
DROP TABLE IF EXISTS `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX97`;
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'daily' AS c0, '2024-01-02' AS c1, 'done' AS c2, '0123456789abcdef' AS c3, 1 AS c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, '2024-01-02 00:00:00' AS c7, '2024-01-03 00:00:00' AS c8, '2024-01-05 06:07:08' AS c9, '2024-01-05 06:07:09' AS c10, '2024-01-05 06:07:09' AS c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  [MICROS] AS c14;
DROP TABLE IF EXISTS `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX88w1704153600x1704240000`;

-- rebuild a table (a full refresh)
DESCRIBE TABLE (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-01') AND `d` < toDate('2024-01-05') GROUP BY `d`
);
CREATE TABLE `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX107w1704067200x1704412800` ENGINE = MergeTree() PARTITION BY toYYYYMM(`d`) ORDER BY `d` AS SELECT * FROM (
SELECT `d`, sum(`v`) AS `v` FROM `shop`.`events` WHERE `d` >= toDate('2024-01-01') AND `d` < toDate('2024-01-05') GROUP BY `d`
);
CREATE TABLE `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX109` AS `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX107w1704067200x1704412800`;
EXISTS TABLE `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX109`;
SHOW CREATE TABLE `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX109`;
DESCRIBE TABLE `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX109`;
INSERT INTO `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX109` (`d`, `v`) SELECT `d`, `v` FROM `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX107w1704067200x1704412800`;
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'daily' AS c0, c1, 'pending' AS c2, '0123456789abcdef' AS c3, c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, c7, c8, c9, c10, c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  ['2024-01-02', '2024-01-03', '2024-01-04'] AS c1,
  [1, 2, 3] AS c4,
  ['2024-01-02 00:00:00', '2024-01-03 00:00:00', '2024-01-04 00:00:00'] AS c7,
  ['2024-01-03 00:00:00', '2024-01-04 00:00:00', '2024-01-05 00:00:00'] AS c8,
  ['2024-01-05 06:07:08', '2024-01-05 06:07:08', '2024-01-05 06:07:08'] AS c9,
  ['2024-01-05 06:07:09', '2024-01-05 06:07:09', '2024-01-05 06:07:09'] AS c10,
  ['2024-01-05 06:07:09', '2024-01-05 06:07:09', '2024-01-05 06:07:09'] AS c11,
  [MICROS, MICROS, MICROS] AS c14;
EXISTS TABLE `shop`.`daily`;
SELECT engine FROM system.databases WHERE name = 'shop';
EXCHANGE TABLES `shop`.`daily` AND `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX109`;
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'daily' AS c0, c1, 'done' AS c2, '0123456789abcdef' AS c3, c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, c7, c8, c9, c10, c11, NULL AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  ['2024-01-02', '2024-01-03', '2024-01-04'] AS c1,
  [1, 2, 3] AS c4,
  ['2024-01-02 00:00:00', '2024-01-03 00:00:00', '2024-01-04 00:00:00'] AS c7,
  ['2024-01-03 00:00:00', '2024-01-04 00:00:00', '2024-01-05 00:00:00'] AS c8,
  ['2024-01-05 06:07:08', '2024-01-05 06:07:08', '2024-01-05 06:07:08'] AS c9,
  ['2024-01-05 06:07:09', '2024-01-05 06:07:09', '2024-01-05 06:07:09'] AS c10,
  ['2024-01-05 06:07:09', '2024-01-05 06:07:09', '2024-01-05 06:07:09'] AS c11,
  [MICROS, MICROS, MICROS] AS c14;
DROP TABLE IF EXISTS `refill_stage`.`shop__daily__w_20240105t060708zabcdef_XXXXXX109`;

-- count the rows of tables
SELECT DISTINCT database, table FROM system.columns WHERE database IN ('shop');
SELECT database, table, any(engine), sum(rows) FROM system.parts WHERE active AND database IN ('shop') GROUP BY database, table;

-- record a failed partition
INSERT INTO `refill`.`partitions` (`model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark`, `version`)
SELECT 'hourly' AS c0, '2024-01-02T04' AS c1, 'failed' AS c2, '0123456789abcdef' AS c3, NULL AS c4, '20240105T060708Z-abcdef' AS c5, 1 AS c6, '2024-01-02 04:00:00' AS c7, '2024-01-02 05:00:00' AS c8, '2024-01-05 06:07:08' AS c9, '2024-01-05 06:07:09' AS c10, NULL AS c11, 'it\'s broken: \'quotes\' and \\backslashes\\' AS c12, NULL AS c13, c14 FROM system.one ARRAY JOIN
  [MICROS] AS c14;

-- save and read a run
INSERT INTO `refill`.`runs` (`run_id`, `target`, `status`, `selection`, `host`, `pid`, `started_at`, `finished_at`, `succeeded`, `failed`, `skipped`, `error`, `version`)
SELECT '20240105T060708Z-abcdef' AS c0, 'dev' AS c1, 'running' AS c2, '{"from":"2024-01-02"}' AS c3, 'host' AS c4, 42 AS c5, '2024-01-05 06:07:08' AS c6, NULL AS c7, 0 AS c8, 0 AS c9, 0 AS c10, NULL AS c11, c12 FROM system.one ARRAY JOIN
  [MICROS] AS c12;
INSERT INTO `refill`.`runs` (`run_id`, `target`, `status`, `selection`, `host`, `pid`, `started_at`, `finished_at`, `succeeded`, `failed`, `skipped`, `error`, `version`)
SELECT '20240105T060708Z-abcdef' AS c0, 'dev' AS c1, 'succeeded' AS c2, '{"from":"2024-01-02"}' AS c3, 'host' AS c4, 42 AS c5, '2024-01-05 06:07:08' AS c6, '2024-01-05 06:08:08' AS c7, 9 AS c8, 0 AS c9, 0 AS c10, NULL AS c11, c12 FROM system.one ARRAY JOIN
  [MICROS] AS c12;
SELECT `run_id`, `target`, `status`, `selection`, `host`, `pid`, `started_at`, `finished_at`, `succeeded`, `failed`, `skipped`, `error` FROM `refill`.`runs` FINAL WHERE `run_id` = '20240105T060708Z-abcdef';
SELECT `run_id`, `target`, `status`, `selection`, `host`, `pid`, `started_at`, `finished_at`, `succeeded`, `failed`, `skipped`, `error` FROM `refill`.`runs` FINAL WHERE 1 = 1 ORDER BY `started_at` DESC, `run_id` DESC LIMIT 10;

-- save and read model versions
INSERT INTO `refill`.`versions` (`model`, `fingerprint`, `text`, `created_at`, `accepted_from`, `accepted_at`, `accepted_partitions`, `version`)
SELECT 'daily' AS c0, '0123456789abcdef' AS c1, 'SELECT \'it\'\'s\'' AS c2, '2024-01-05 06:07:08' AS c3, NULL AS c4, NULL AS c5, NULL AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `model`, `fingerprint`, `text`, `created_at`, `accepted_from`, `accepted_at`, `accepted_partitions` FROM `refill`.`versions` FINAL WHERE `model` IN ('daily') ORDER BY `model`, `created_at`;

-- read the ledger
SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM `refill`.`partitions` FINAL WHERE `model` IN ('daily', 'hourly', 'by_region', 'totals') ORDER BY `model`, `window_start`, `partition_key`;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `refill`.`leases` FINAL WHERE 1 = 1;
EXISTS TABLE `refill`.`summaries`;
CREATE TABLE IF NOT EXISTS `refill`.`summaries` (`keep_id` UInt64, `query_key` String, `ledger_state` String, `marker` UInt8, `model` String, `bucket` Nullable(DateTime('UTC')), `records` UInt64, `done` UInt64, `pending` UInt64, `removed` UInt64, `min_fingerprint` String, `max_fingerprint` String, `min_started` Nullable(DateTime('UTC')), `max_published` Nullable(DateTime('UTC')), `row_count` Int64, `self_stale` UInt64, `stale` UInt64) ENGINE = MergeTree() PARTITION BY `keep_id` ORDER BY `keep_id`;
SELECT concat(toString(count()), ':', toString(sum(cityHash64(`model`, `partition_key`, `version`))), ':', (SELECT concat(toString(count()), ':', toString(sum(`is_done`)), ':', toString(max(`create_time`))) FROM system.mutations WHERE `database` = 'refill' AND `table` = 'partitions')) FROM `refill`.`partitions` FINAL;
INSERT INTO `refill`.`summaries` (`keep_id`, `query_key`, `ledger_state`, `marker`, `model`, `bucket`, `records`, `done`, `pending`, `removed`, `min_fingerprint`, `max_fingerprint`, `min_started`, `max_published`, `row_count`, `self_stale`, `stale`) SELECT toUInt64(MICROS), 'KEY', 'STATE', toUInt8(0), `model`, `bucket`, `records`, `done`, `pending`, `removed`, `min_fingerprint`, `max_fingerprint`, `min_started`, `max_published`, `row_count`, `self_stale`, `stale` FROM (SELECT `model`, toDateTime(if(`window_start` < toDateTime('2023-01-01 00:00:00', 'UTC'), toStartOfYear(`window_start`), toStartOfMonth(`window_start`)), 'UTC') AS `bucket`, count() AS `records`, sum(`state` = 'done') AS `done`, sum(`state` = 'pending') AS `pending`, sum(`state` = 'removed') AS `removed`, min(`fingerprint`) AS `min_fingerprint`, max(`fingerprint`) AS `max_fingerprint`, min(`started_at`) AS `min_started`, max(`published_at`) AS `max_published`, sum(if(`state` IN ('done', 'partial', 'failed'), ifNull(`row_count`, 0), 0)) AS `row_count`, toUInt64(0) AS `self_stale` FROM (SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM `refill`.`partitions` FINAL WHERE `model` IN ('daily', 'totals')) GROUP BY `model`, `bucket`) AS `su` ANY LEFT JOIN (SELECT `model`, `bucket`, sum(`n`) AS `stale` FROM (SELECT arrayElement(['daily'], intDiv(`k`, 4294967296)) AS `model`, toDateTime(if(`window_start` < toDateTime('2023-01-01 00:00:00', 'UTC'), toStartOfYear(`window_start`), toStartOfMonth(`window_start`)), 'UTC') AS `bucket`, count() AS `n` FROM (SELECT `k`, `window_start`, `started_at`, `published_at`, `up_published` FROM (SELECT transform(`model`, ['daily'], [1], 0) * 4294967296 + toUInt32(toDate(assumeNotNull(`window_start`))) AS `k`, `window_start`, `started_at`, `published_at` FROM (SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM `refill`.`partitions` FINAL WHERE `model` IN ('daily')) WHERE `window_start` IS NOT NULL) AS `r` ALL INNER JOIN (SELECT arrayJoin(arrayElement(CAST([[1]] AS Array(Array(UInt32))), transform(`model`, ['hourly'], [1], 0))) * 4294967296 + toUInt32(toDate(assumeNotNull(`window_start`))) AS `k`, `published_at` AS `up_published` FROM (SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM `refill`.`partitions` FINAL WHERE `model` IN ('hourly')) WHERE `window_start` IS NOT NULL AND `published_at` IS NOT NULL) AS `u` USING (`k`)) WHERE `up_published` > `started_at` AND (`published_at` IS NULL OR `up_published` != `published_at`) GROUP BY `model`, `bucket`) GROUP BY `model`, `bucket`) AS `sl` USING (`model`, `bucket`);
SELECT (SELECT concat(toString(count()), ':', toString(sum(cityHash64(`model`, `partition_key`, `version`))), ':', (SELECT concat(toString(count()), ':', toString(sum(`is_done`)), ':', toString(max(`create_time`))) FROM system.mutations WHERE `database` = 'refill' AND `table` = 'partitions')) FROM `refill`.`partitions` FINAL), count() FROM `refill`.`summaries` WHERE `keep_id` = MICROS;
INSERT INTO `refill`.`summaries` (`keep_id`, `query_key`, `ledger_state`, `marker`, `model`, `records`) SELECT toUInt64(MICROS), 'KEY', 'STATE', toUInt8(1), '', toUInt64(2);
SELECT DISTINCT `partition` FROM system.parts WHERE `database` = 'refill' AND `table` = 'summaries' AND `active`;
SELECT `keep_id`, `marker`, `model`, `bucket`, `records`, `done`, `pending`, `removed`, `min_fingerprint`, `max_fingerprint`, `min_started`, `max_published`, `row_count`, `self_stale`, `stale` FROM `refill`.`summaries` WHERE `keep_id` IN (SELECT `keep_id` FROM `refill`.`summaries` WHERE `marker` = 1 AND `query_key` = 'KEY' AND `ledger_state` IN (SELECT concat(toString(count()), ':', toString(sum(cityHash64(`model`, `partition_key`, `version`))), ':', (SELECT concat(toString(count()), ':', toString(sum(`is_done`)), ':', toString(max(`create_time`))) FROM system.mutations WHERE `database` = 'refill' AND `table` = 'partitions')) FROM `refill`.`partitions` FINAL)) ORDER BY `keep_id` DESC, `marker` DESC;
SELECT countIf(`window_end` IS NULL OR toUInt32(`window_end`) > transform(`model`, ['daily'], [1704240000], toUInt32(0))), count() FROM `refill`.`partitions` WHERE `model` IN ('daily');
SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM (SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM (SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM `refill`.`partitions` FINAL WHERE `model` IN ('totals')) UNION ALL SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM (SELECT `model`, `partition_key`, `state`, `fingerprint`, `row_count`, `run_id`, `attempts`, `window_start`, `window_end`, `started_at`, `finished_at`, `published_at`, `error`, `watermark` FROM `refill`.`partitions` FINAL WHERE `model` IN ('daily')) WHERE `window_end` IS NULL OR toUInt32(`window_end`) > transform(`model`, ['daily'], [1704240000], toUInt32(0))) ORDER BY `model`, `window_start`, `partition_key`;

-- renew and release the lease
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `refill`.`leases` FINAL WHERE `run_id` = '20240105T060708Z-abcdef';
INSERT INTO `refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'shop.daily' AS c0, '20240105T060708Z-abcdef' AS c1, 'host' AS c2, 42 AS c3, '2024-01-05 06:07:08' AS c4, '2024-01-05 06:07:38' AS c5, '2024-01-05 06:08:38' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;
SELECT `table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at` FROM `refill`.`leases` FINAL WHERE `run_id` = '20240105T060708Z-abcdef';
INSERT INTO `refill`.`leases` (`table_name`, `run_id`, `host`, `pid`, `acquired_at`, `heartbeat_at`, `expires_at`, `version`)
SELECT 'shop.daily' AS c0, '20240105T060708Z-abcdef' AS c1, 'host' AS c2, 42 AS c3, '2024-01-05 06:07:08' AS c4, 'NOW' AS c5, '1970-01-01 00:00:00' AS c6, c7 FROM system.one ARRAY JOIN
  [MICROS] AS c7;

-- clean up the stages of dead runs
SELECT DISTINCT table FROM system.columns WHERE database = 'refill_stage' AND startsWith(table, '') ORDER BY table;
SELECT DISTINCT table FROM system.columns WHERE database = 'refill_stage' AND startsWith(table, '') ORDER BY table;
DROP TABLE IF EXISTS `refill_stage`.`shop__daily__s_20240105t060708zabcdef_XXXXXX107w1704067200x1704412800`;
DROP TABLE IF EXISTS `refill_stage`.`shop__totals__s_20240105t060708zabcdef_XXXXXX71`;
