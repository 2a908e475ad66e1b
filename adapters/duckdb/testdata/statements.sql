-- open
ATTACH ':memory:' AS "refill_stages";
CREATE SCHEMA "refill_stages"."refill_stage";
SELECT current_database();

-- set up the ledger
-- begin
CREATE SCHEMA IF NOT EXISTS "refill";
CREATE TABLE IF NOT EXISTS "refill"."partitions" (
  "model" VARCHAR NOT NULL,
  "partition_key" VARCHAR NOT NULL,
  "state" VARCHAR NOT NULL,
  "fingerprint" VARCHAR NOT NULL,
  "row_count" BIGINT,
  "run_id" VARCHAR NOT NULL,
  "attempts" BIGINT NOT NULL,
  "window_start" TIMESTAMP,
  "window_end" TIMESTAMP,
  "started_at" TIMESTAMP NOT NULL,
  "finished_at" TIMESTAMP NOT NULL,
  "published_at" TIMESTAMP,
  "error" VARCHAR,
  "watermark" VARCHAR
);
CREATE TABLE IF NOT EXISTS "refill"."runs" (
  "run_id" VARCHAR NOT NULL,
  "target" VARCHAR NOT NULL,
  "status" VARCHAR NOT NULL,
  "selection" VARCHAR NOT NULL,
  "host" VARCHAR NOT NULL,
  "pid" BIGINT NOT NULL,
  "started_at" TIMESTAMP NOT NULL,
  "finished_at" TIMESTAMP,
  "succeeded" BIGINT NOT NULL,
  "failed" BIGINT NOT NULL,
  "skipped" BIGINT NOT NULL,
  "error" VARCHAR
);
CREATE TABLE IF NOT EXISTS "refill"."leases" (
  "table_name" VARCHAR NOT NULL,
  "run_id" VARCHAR NOT NULL,
  "host" VARCHAR NOT NULL,
  "pid" BIGINT NOT NULL,
  "acquired_at" TIMESTAMP NOT NULL,
  "heartbeat_at" TIMESTAMP NOT NULL,
  "expires_at" TIMESTAMP NOT NULL
);
CREATE TABLE IF NOT EXISTS "refill"."versions" (
  "model" VARCHAR NOT NULL,
  "fingerprint" VARCHAR NOT NULL,
  "text" VARCHAR NOT NULL,
  "created_at" TIMESTAMP NOT NULL,
  "accepted_from" VARCHAR,
  "accepted_at" TIMESTAMP,
  "accepted_partitions" BIGINT
);
-- commit

-- load a seed
-- begin
CREATE SCHEMA IF NOT EXISTS "shop";
CREATE OR REPLACE TABLE "shop"."events" ("d" DATE, "ts" TIMESTAMP, "region" VARCHAR, "v" BIGINT);
INSERT INTO "shop"."events" VALUES
  (DATE '2024-01-02', TIMESTAMP '2024-01-02 03:00:00', 'eu', 1),
  (DATE '2024-01-03', TIMESTAMP '2024-01-03 04:00:00', 'us', 2),
  (DATE '2024-01-04', TIMESTAMP '2024-01-04 04:00:00', 'it''s', 3);
-- commit

-- take the lease of a table
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'shop.daily';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'shop.daily';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('shop.daily', '20240105T060708Z-abcdef', 'host', 42, TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:08:08');
-- commit

-- describe a query and a table that does not exist
DESCRIBE SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03' GROUP BY "d";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "shop", "daily"

-- create a table with declared columns
-- begin
CREATE SCHEMA IF NOT EXISTS "shop";
CREATE TABLE IF NOT EXISTS "shop"."declared" ("d" DATE, "v" BIGINT);
-- commit

-- stage, check and publish a day into a new table
CREATE TABLE "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX1" AS
SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03' GROUP BY "d";
SELECT "d" AS k, count(*) AS n FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX1" GROUP BY "d";
-- begin
CREATE SCHEMA IF NOT EXISTS "shop";
CREATE TABLE IF NOT EXISTS "shop"."daily" AS SELECT * FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX1" LIMIT 0;
DELETE FROM "shop"."daily" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03';
INSERT INTO "shop"."daily" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX1";
DELETE FROM "refill"."partitions" WHERE "model" = 'daily' AND "partition_key" IN ('2024-01-02');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('daily', '2024-01-02', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX1";

-- stage and publish a batch of three days
CREATE TABLE "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX2" AS
SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-05' GROUP BY "d";
SELECT "d" AS k, count(*) AS n FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX2" GROUP BY "d";
-- begin
DELETE FROM "shop"."daily" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-05';
INSERT INTO "shop"."daily" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX2";
DELETE FROM "refill"."partitions" WHERE "model" = 'daily' AND "partition_key" IN ('2024-01-02', '2024-01-03', '2024-01-04');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('daily', '2024-01-02', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL),
  ('daily', '2024-01-03', 'done', '0123456789abcdef', 2, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL),
  ('daily', '2024-01-04', 'done', '0123456789abcdef', 3, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP '2024-01-05 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX2";

-- stage and publish an hour
CREATE TABLE "refill_stages"."refill_stage"."shop__hourly__s_20240105t060708zabcdef_XXXXXX3" AS
SELECT "ts", "v" FROM "shop"."events" WHERE "ts" >= TIMESTAMP '2024-01-02 03:00:00' AND "ts" < TIMESTAMP '2024-01-02 04:00:00';
SELECT "ts" AS k, count(*) AS n FROM "refill_stages"."refill_stage"."shop__hourly__s_20240105t060708zabcdef_XXXXXX3" GROUP BY "ts";
-- begin
CREATE SCHEMA IF NOT EXISTS "shop";
CREATE TABLE IF NOT EXISTS "shop"."hourly" AS SELECT * FROM "refill_stages"."refill_stage"."shop__hourly__s_20240105t060708zabcdef_XXXXXX3" LIMIT 0;
DELETE FROM "shop"."hourly" WHERE "ts" >= TIMESTAMP '2024-01-02 03:00:00' AND "ts" < TIMESTAMP '2024-01-02 04:00:00';
INSERT INTO "shop"."hourly" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__hourly__s_20240105t060708zabcdef_XXXXXX3";
DELETE FROM "refill"."partitions" WHERE "model" = 'hourly' AND "partition_key" IN ('2024-01-02T03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('hourly', '2024-01-02T03', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 03:00:00', TIMESTAMP '2024-01-02 04:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__hourly__s_20240105t060708zabcdef_XXXXXX3";

-- stage and publish list values
CREATE TABLE "refill_stages"."refill_stage"."shop__by_region__s_20240105t060708zabcdef_XXXXXX4" AS
SELECT "region", sum("v") AS "v" FROM "shop"."events" WHERE "region" IN ('eu', 'it''s') GROUP BY "region";
SELECT "region" AS k, count(*) AS n FROM "refill_stages"."refill_stage"."shop__by_region__s_20240105t060708zabcdef_XXXXXX4" GROUP BY "region";
-- begin
CREATE SCHEMA IF NOT EXISTS "shop";
CREATE TABLE IF NOT EXISTS "shop"."by_region" AS SELECT * FROM "refill_stages"."refill_stage"."shop__by_region__s_20240105t060708zabcdef_XXXXXX4" LIMIT 0;
DELETE FROM "shop"."by_region" WHERE "region" IN ('eu', 'it''s');
INSERT INTO "shop"."by_region" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__by_region__s_20240105t060708zabcdef_XXXXXX4";
DELETE FROM "refill"."partitions" WHERE "model" = 'by_region' AND "partition_key" IN ('eu', 'it''s');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('by_region', 'eu', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, NULL, NULL, TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL),
  ('by_region', 'it''s', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, NULL, NULL, TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__by_region__s_20240105t060708zabcdef_XXXXXX4";

-- stage and publish a whole table
CREATE TABLE "refill_stages"."refill_stage"."shop__totals__s_20240105t060708zabcdef_XXXXXX5" AS
SELECT count(*) AS "events", sum("v") AS "v" FROM "shop"."events";
SELECT 1 AS k, count(*) AS n FROM "refill_stages"."refill_stage"."shop__totals__s_20240105t060708zabcdef_XXXXXX5" GROUP BY 1;
-- begin
CREATE SCHEMA IF NOT EXISTS "shop";
CREATE TABLE IF NOT EXISTS "shop"."totals" AS SELECT * FROM "refill_stages"."refill_stage"."shop__totals__s_20240105t060708zabcdef_XXXXXX5" LIMIT 0;
DELETE FROM "shop"."totals" WHERE 1 = 1;
INSERT INTO "shop"."totals" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__totals__s_20240105t060708zabcdef_XXXXXX5";
DELETE FROM "refill"."partitions" WHERE "model" = 'totals' AND "partition_key" IN ('all');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('totals', 'all', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, NULL, NULL, TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit

-- publish two tables together, the second reading the first through an overlay
CREATE TABLE "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX6" AS
SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-03' AND "d" < DATE '2024-01-04' GROUP BY "d";
SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ? AND table_catalog = current_database(); -- args: "shop", "daily"
CREATE VIEW "refill_stages"."refill_stage"."shop__daily__v_20240105t060708zabcdef_XXXXXX7" AS
SELECT * FROM "w"."shop"."daily" WHERE NOT coalesce("d" >= DATE '2024-01-03' AND "d" < DATE '2024-01-04', FALSE)
UNION ALL BY NAME
SELECT * FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX6";
CREATE TABLE "refill_stages"."refill_stage"."shop__totals__s_20240105t060708zabcdef_XXXXXX8" AS
SELECT count(*) AS "events", sum("v") AS "v" FROM "refill_stages"."refill_stage"."shop__daily__v_20240105t060708zabcdef_XXXXXX7";
DROP VIEW IF EXISTS "refill_stages"."refill_stage"."shop__daily__v_20240105t060708zabcdef_XXXXXX7";
-- begin
DELETE FROM "shop"."daily" WHERE "d" >= DATE '2024-01-03' AND "d" < DATE '2024-01-04';
INSERT INTO "shop"."daily" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX6";
DELETE FROM "refill"."partitions" WHERE "model" = 'daily' AND "partition_key" IN ('2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('daily', '2024-01-03', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
DELETE FROM "shop"."totals" WHERE 1 = 1;
INSERT INTO "shop"."totals" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__totals__s_20240105t060708zabcdef_XXXXXX8";
DELETE FROM "refill"."partitions" WHERE "model" = 'totals' AND "partition_key" IN ('all');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('totals', 'all', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, NULL, NULL, TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX6";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__totals__s_20240105t060708zabcdef_XXXXXX8";

-- publish a day directly, without a stage
-- begin
DELETE FROM "shop"."daily" WHERE "d" >= DATE '2024-01-04' AND "d" < DATE '2024-01-05';
INSERT INTO "shop"."daily" BY NAME SELECT * FROM (
SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-04' AND "d" < DATE '2024-01-05' GROUP BY "d"
) AS refill_query
WHERE CASE WHEN coalesce("d" >= DATE '2024-01-04' AND "d" < DATE '2024-01-05', FALSE) THEN TRUE ELSE error('refill: a row lies outside the window') END;
DELETE FROM "refill"."partitions" WHERE "model" = 'daily' AND "partition_key" IN ('2024-01-04');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('daily', '2024-01-04', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP '2024-01-05 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit

-- publish twelve days directly, in one batch counted per day
DESCRIBE SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-01' AND "d" < DATE '2024-01-13' GROUP BY "d";
-- begin
DELETE FROM "shop"."daily" WHERE "d" >= DATE '2024-01-01' AND "d" < DATE '2024-01-13';
INSERT INTO "shop"."daily" BY NAME SELECT * FROM (
SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-01' AND "d" < DATE '2024-01-13' GROUP BY "d"
) AS refill_query
WHERE CASE WHEN coalesce("d" >= DATE '2024-01-01' AND "d" < DATE '2024-01-13', FALSE) THEN TRUE ELSE error('refill: a row lies outside the window') END;
SELECT count(*), "d", "d" FROM "shop"."daily" WHERE "d" >= DATE '2024-01-01' AND "d" < DATE '2024-01-13' GROUP BY "d";
DELETE FROM "refill"."partitions" WHERE "model" = 'daily' AND "partition_key" IN (SELECT unnest(from_json('["2024-01-01","2024-01-02","2024-01-03","2024-01-04","2024-01-05","2024-01-06","2024-01-07","2024-01-08","2024-01-09","2024-01-10","2024-01-11","2024-01-12"]', '["VARCHAR"]')));
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark")
SELECT 'daily',
  unnest(from_json('["2024-01-01","2024-01-02","2024-01-03","2024-01-04","2024-01-05","2024-01-06","2024-01-07","2024-01-08","2024-01-09","2024-01-10","2024-01-11","2024-01-12"]', '["VARCHAR"]')),
  'done',
  '0123456789abcdef',
  unnest(from_json('[0,1,1,1,0,0,0,0,0,0,0,0]', '["BIGINT"]')),
  '20240105T060708Z-abcdef',
  1,
  unnest(from_json('["2024-01-01 00:00:00","2024-01-02 00:00:00","2024-01-03 00:00:00","2024-01-04 00:00:00","2024-01-05 00:00:00","2024-01-06 00:00:00","2024-01-07 00:00:00","2024-01-08 00:00:00","2024-01-09 00:00:00","2024-01-10 00:00:00","2024-01-11 00:00:00","2024-01-12 00:00:00"]', '["TIMESTAMP"]')),
  unnest(from_json('["2024-01-02 00:00:00","2024-01-03 00:00:00","2024-01-04 00:00:00","2024-01-05 00:00:00","2024-01-06 00:00:00","2024-01-07 00:00:00","2024-01-08 00:00:00","2024-01-09 00:00:00","2024-01-10 00:00:00","2024-01-11 00:00:00","2024-01-12 00:00:00","2024-01-13 00:00:00"]', '["TIMESTAMP"]')),
  TIMESTAMP '2024-01-05 06:07:08',
  TIMESTAMP '2024-01-05 06:07:09',
  TIMESTAMP '2024-01-05 06:07:09',
  NULL,
  NULL;
-- commit

-- diff a query with a day of a table, by key and whole
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "shop", "daily"
WITH refill_old AS (
  SELECT TRUE AS refill_in, "d" AS refill_c0, "v" AS refill_c1 FROM "shop"."daily" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03'
), refill_new AS (
  SELECT TRUE AS refill_in, "d" AS refill_c0, "v" AS refill_c1 FROM (
SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03' GROUP BY "d"
) AS refill_query
), refill_pairs AS (
  SELECT o.refill_in AS o_in, n.refill_in AS n_in, o.refill_c0 AS o_c0, n.refill_c0 AS n_c0, o.refill_c1 AS o_c1, n.refill_c1 AS n_c1,
    (o.refill_c1 IS DISTINCT FROM n.refill_c1) AS refill_differs
  FROM refill_old AS o FULL OUTER JOIN refill_new AS n ON o.refill_c0 IS NOT DISTINCT FROM n.refill_c0
)
SELECT coalesce(sum(CASE WHEN n_in IS NULL THEN 1 ELSE 0 END), 0),
  coalesce(sum(CASE WHEN o_in IS NULL THEN 1 ELSE 0 END), 0),
  coalesce(sum(CASE WHEN o_in AND n_in AND refill_differs THEN 1 ELSE 0 END), 0),
  coalesce(sum(CASE WHEN o_in AND n_in AND NOT refill_differs THEN 1 ELSE 0 END), 0),
  CAST(sum(o_c1) AS DOUBLE),
  CAST(sum(n_c1) AS DOUBLE),
  min_by(CASE WHEN n_in IS NULL THEN [CAST(o_c0 AS VARCHAR), CAST(o_c1 AS VARCHAR)] END, CASE WHEN n_in IS NULL THEN [CAST(o_c0 AS VARCHAR), CAST(o_c1 AS VARCHAR)] END, 2),
  min_by(CASE WHEN o_in IS NULL THEN [CAST(n_c0 AS VARCHAR), CAST(n_c1 AS VARCHAR)] END, CASE WHEN o_in IS NULL THEN [CAST(n_c0 AS VARCHAR), CAST(n_c1 AS VARCHAR)] END, 2),
  min_by(CASE WHEN o_in AND n_in AND refill_differs THEN [CAST(o_c0 AS VARCHAR), CAST(o_c1 AS VARCHAR), CAST(n_c0 AS VARCHAR), CAST(n_c1 AS VARCHAR)] END, CASE WHEN o_in AND n_in AND refill_differs THEN [CAST(o_c0 AS VARCHAR), CAST(o_c1 AS VARCHAR), CAST(n_c0 AS VARCHAR), CAST(n_c1 AS VARCHAR)] END, 2)
FROM refill_pairs;
WITH refill_old AS (
  SELECT "d" AS refill_c0, "v" AS refill_c1, count(*) AS refill_n FROM "shop"."daily" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03' GROUP BY ALL
), refill_new AS (
  SELECT "d" AS refill_c0, "v" AS refill_c1, count(*) AS refill_n FROM (
SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03' GROUP BY "d"
) AS refill_query GROUP BY ALL
), refill_pairs AS (
  SELECT coalesce(o.refill_n, 0) AS o_n, coalesce(n.refill_n, 0) AS n_n, o.refill_c0 AS o_c0, n.refill_c0 AS n_c0, o.refill_c1 AS o_c1, n.refill_c1 AS n_c1
  FROM refill_old AS o FULL OUTER JOIN refill_new AS n ON o.refill_c0 IS NOT DISTINCT FROM n.refill_c0 AND o.refill_c1 IS NOT DISTINCT FROM n.refill_c1
)
SELECT coalesce(sum(CASE WHEN o_n > n_n THEN o_n - n_n ELSE 0 END), 0),
  coalesce(sum(CASE WHEN n_n > o_n THEN n_n - o_n ELSE 0 END), 0),
  0,
  coalesce(sum(CASE WHEN o_n < n_n THEN o_n ELSE n_n END), 0),
  CAST(sum(o_c1 * o_n) AS DOUBLE),
  CAST(sum(n_c1 * n_n) AS DOUBLE),
  min_by(CASE WHEN o_n > n_n THEN [CAST(o_c0 AS VARCHAR), CAST(o_c1 AS VARCHAR)] END, CASE WHEN o_n > n_n THEN [CAST(o_c0 AS VARCHAR), CAST(o_c1 AS VARCHAR)] END, 2),
  min_by(CASE WHEN n_n > o_n THEN [CAST(n_c0 AS VARCHAR), CAST(n_c1 AS VARCHAR)] END, CASE WHEN n_n > o_n THEN [CAST(n_c0 AS VARCHAR), CAST(n_c1 AS VARCHAR)] END, 2),
  NULL
FROM refill_pairs;

-- publish a day that adds a column
DESCRIBE SELECT "d", sum("v") AS "v", count(*) AS "n" FROM "shop"."events" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03' GROUP BY "d";
CREATE TABLE "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX9" AS
SELECT "d", sum("v") AS "v", count(*) AS "n" FROM "shop"."events" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03' GROUP BY "d";
-- begin
ALTER TABLE "shop"."daily" ADD COLUMN IF NOT EXISTS "n" BIGINT;
DELETE FROM "shop"."daily" WHERE "d" >= DATE '2024-01-02' AND "d" < DATE '2024-01-03';
INSERT INTO "shop"."daily" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX9";
DELETE FROM "refill"."partitions" WHERE "model" = 'daily' AND "partition_key" IN ('2024-01-02');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('daily', '2024-01-02', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX9";

-- rebuild a table (a full refresh)
CREATE TABLE "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX10" AS
SELECT "d", sum("v") AS "v" FROM "shop"."events" WHERE "d" >= DATE '2024-01-01' AND "d" < DATE '2024-01-05' GROUP BY "d";
-- begin
CREATE SCHEMA IF NOT EXISTS "shop";
DROP TABLE IF EXISTS "shop"."daily";
CREATE TABLE "shop"."daily" AS SELECT * FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX10" LIMIT 0;
INSERT INTO "shop"."daily" BY NAME SELECT * FROM "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX10";
DELETE FROM "refill"."partitions" WHERE model = 'daily';
DELETE FROM "refill"."partitions" WHERE "model" = 'daily' AND "partition_key" IN ('2024-01-02', '2024-01-03', '2024-01-04');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('daily', '2024-01-02', 'done', '0123456789abcdef', 1, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL),
  ('daily', '2024-01-03', 'done', '0123456789abcdef', 2, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL),
  ('daily', '2024-01-04', 'done', '0123456789abcdef', 3, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP '2024-01-05 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', TIMESTAMP '2024-01-05 06:07:09', NULL, NULL);
-- commit

-- count the rows of tables
SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_catalog = current_database();
SELECT 'shop.daily', count(*) FROM "shop"."daily"
UNION ALL SELECT 'shop.totals', count(*) FROM "shop"."totals";

-- record a failed partition
-- begin
DELETE FROM "refill"."partitions" WHERE "model" = 'hourly' AND "partition_key" IN ('2024-01-02T04');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('hourly', '2024-01-02T04', 'failed', '0123456789abcdef', NULL, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 04:00:00', TIMESTAMP '2024-01-02 05:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:09', NULL, 'it''s broken: ''quotes'' and \backslashes\', NULL);
-- commit

-- save and read a run
-- begin
DELETE FROM "refill"."runs" WHERE run_id = '20240105T060708Z-abcdef';
INSERT INTO "refill"."runs" ("run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error") VALUES ('20240105T060708Z-abcdef', 'dev', 'running', '{"from":"2024-01-02"}', 'host', 42, TIMESTAMP '2024-01-05 06:07:08', NULL, 0, 0, 0, NULL);
-- commit
-- begin
DELETE FROM "refill"."runs" WHERE run_id = '20240105T060708Z-abcdef';
INSERT INTO "refill"."runs" ("run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error") VALUES ('20240105T060708Z-abcdef', 'dev', 'succeeded', '{"from":"2024-01-02"}', 'host', 42, TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:08:08', 9, 0, 0, NULL);
-- commit
SELECT "run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error" FROM "refill"."runs" WHERE run_id = '20240105T060708Z-abcdef';
SELECT "run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error" FROM "refill"."runs" ORDER BY started_at DESC, run_id DESC LIMIT 10;

-- save and read model versions
-- begin
DELETE FROM "refill"."versions" WHERE (model, fingerprint) IN (('daily', '0123456789abcdef'));
INSERT INTO "refill"."versions" ("model", "fingerprint", "text", "created_at", "accepted_from", "accepted_at", "accepted_partitions") VALUES
  ('daily', '0123456789abcdef', 'SELECT ''it''''s''', TIMESTAMP '2024-01-05 06:07:08', NULL, NULL, NULL);
-- commit
SELECT "model", "fingerprint", "text", "created_at", "accepted_from", "accepted_at", "accepted_partitions" FROM "refill"."versions" WHERE model IN ('daily') ORDER BY model, created_at;

-- read the ledger
SELECT "model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark" FROM "refill"."partitions" WHERE model IN ('daily', 'hourly', 'by_region', 'totals');
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" ORDER BY table_name;
SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND database_name = current_database(); -- args: "refill"
-- begin
CREATE TABLE IF NOT EXISTS "refill"."summaries" (
  query_key VARCHAR NOT NULL, ledger_records BIGINT NOT NULL, ledger_state VARCHAR NOT NULL,
  model VARCHAR NOT NULL, bucket TIMESTAMP, records BIGINT, done BIGINT, pending BIGINT, removed BIGINT,
  min_fingerprint VARCHAR, max_fingerprint VARCHAR, min_started TIMESTAMP, max_published TIMESTAMP,
  row_count BIGINT, self_stale BIGINT, stale BIGINT
);
DELETE FROM "refill"."summaries" WHERE query_key = 'KEY' OR NOT EXISTS (SELECT 1 FROM (SELECT count(*), sum(hash("model", "window_start", "state", "fingerprint", "started_at", "published_at", "row_count")::HUGEINT)::VARCHAR FROM "refill"."partitions") AS s(n, h) WHERE s.n = ledger_records AND s.h = ledger_state);
INSERT INTO "refill"."summaries" (query_key, ledger_records, ledger_state, model, bucket, records, done, pending, removed, min_fingerprint, max_fingerprint, min_started, max_published, row_count, self_stale, stale)
SELECT 'KEY', n, h, model, bucket, records, done, pending, removed, min_fingerprint, max_fingerprint, min_started, max_published, row_count, self_stale, stale FROM (WITH st(n, h) AS (SELECT count(*), sum(hash("model", "window_start", "state", "fingerprint", "started_at", "published_at", "row_count")::HUGEINT)::VARCHAR FROM "refill"."partitions"), su(model, bucket, records, done, pending, removed, min_fingerprint, max_fingerprint, min_started, max_published, row_count, self_stale) AS (SELECT "model", CASE WHEN "window_start" < TIMESTAMP '2023-01-01 00:00:00' THEN date_trunc('year', "window_start") ELSE date_trunc('month', "window_start") END AS "bucket", count(*), sum(CASE WHEN "state" = 'done' THEN 1 ELSE 0 END), sum(CASE WHEN "state" = 'pending' THEN 1 ELSE 0 END), sum(CASE WHEN "state" = 'removed' THEN 1 ELSE 0 END), min("fingerprint"), max("fingerprint"), min("started_at"), max("published_at"), sum(CASE WHEN "state" IN ('done', 'partial', 'failed') THEN "row_count" ELSE 0 END), 0 FROM "refill"."partitions" WHERE "model" IN ('daily', 'totals') GROUP BY "model", "bucket"), sl(model, bucket, n) AS (SELECT r."model", CASE WHEN r."window_start" < TIMESTAMP '2023-01-01 00:00:00' THEN date_trunc('year', r."window_start") ELSE date_trunc('month', r."window_start") END AS "bucket", count(*) FROM "refill"."partitions" AS r JOIN (VALUES ('daily', 'hourly')) AS e(down_model, up_model) ON r."model" = e.down_model JOIN "refill"."partitions" AS u ON u."model" = e.up_model AND date_trunc('day', u."window_start") = date_trunc('day', r."window_start") WHERE u."published_at" > r."started_at" AND (r."published_at" IS NULL OR u."published_at" <> r."published_at") GROUP BY r."model", "bucket"), x AS (SELECT model, bucket, sum(n) AS n FROM sl GROUP BY model, bucket) SELECT su.model, su.bucket, su.records, su.done, su.pending, su.removed, su.min_fingerprint, su.max_fingerprint, su.min_started, su.max_published, su.row_count, su.self_stale, coalesce(x.n, 0) AS stale, st.n AS n, st.h AS h FROM st LEFT JOIN su ON true LEFT JOIN x ON x.model = su.model AND x.bucket = su.bucket) WHERE model IS NOT NULL;
-- commit
SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND database_name = current_database(); -- args: "refill"
WITH state AS (SELECT count(*), sum(hash("model", "window_start", "state", "fingerprint", "started_at", "published_at", "row_count")::HUGEINT)::VARCHAR FROM "refill"."partitions") SELECT model, bucket, records, done, pending, removed, min_fingerprint, max_fingerprint, min_started, max_published, row_count, self_stale, stale FROM "refill"."summaries" AS k, state AS s(n, h) WHERE k.query_key = 'KEY' AND k.ledger_records = s.n AND k.ledger_state = s.h;
SELECT p."model", p."partition_key", p."state", p."fingerprint", p."row_count", p."run_id", p."attempts", p."window_start", p."window_end", p."started_at", p."finished_at", p."published_at", p."error", p."watermark" FROM "refill"."partitions" AS p JOIN (VALUES ('totals', CAST(NULL AS TIMESTAMP)), ('daily', TIMESTAMP '2024-01-03 00:00:00')) AS s(model_name, since) ON p."model" = s.model_name WHERE s.since IS NULL OR p."window_end" IS NULL OR p."window_end" > s.since;

-- renew and release the lease
UPDATE "refill"."leases" SET heartbeat_at = TIMESTAMP '2024-01-05 06:07:38', expires_at = TIMESTAMP '2024-01-05 06:08:38' WHERE run_id = '20240105T060708Z-abcdef';
DELETE FROM "refill"."leases" WHERE run_id = '20240105T060708Z-abcdef';

-- clean up the stages of dead runs
SELECT database_name, table_name, 'TABLE' AS kind FROM duckdb_tables() WHERE schema_name = $1 AND database_name <> $2
UNION ALL SELECT database_name, view_name, 'VIEW' FROM duckdb_views() WHERE schema_name = $1 AND database_name <> $2 AND NOT internal
ORDER BY kind DESC, table_name; -- args: "refill_stage", "refill_defer"
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__daily__s_20240105t060708zabcdef_XXXXXX10";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."shop__totals__s_20240105t060708zabcdef_XXXXXX5";
