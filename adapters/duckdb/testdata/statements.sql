-- ledger
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

-- publish one day
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."daily" AS SELECT * FROM "refill_stage"."marts__daily__1" LIMIT 0;
DELETE FROM "marts"."daily" WHERE "order_date" >= DATE '2024-01-02' AND "order_date" < DATE '2024-01-03';
INSERT INTO "marts"."daily" BY NAME SELECT * FROM "refill_stage"."marts__daily__1";
DELETE FROM "refill"."partitions" WHERE model = 'marts.daily' AND partition_key IN ('2024-01-02');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.daily', '2024-01-02', 'done', '0123456789abcdef', 42, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', NULL, NULL);

-- publish a batch of three days
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."daily" AS SELECT * FROM "refill_stage"."marts__daily__2" LIMIT 0;
DELETE FROM "marts"."daily" WHERE "order_date" >= DATE '2024-01-02' AND "order_date" < DATE '2024-01-05';
INSERT INTO "marts"."daily" BY NAME SELECT * FROM "refill_stage"."marts__daily__2";
DELETE FROM "refill"."partitions" WHERE model = 'marts.daily' AND partition_key IN ('2024-01-02', '2024-01-03', '2024-01-04');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.daily', '2024-01-02', 'done', '0123456789abcdef', 42, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', NULL, NULL),
  ('marts.daily', '2024-01-03', 'done', '0123456789abcdef', 42, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', NULL, NULL),
  ('marts.daily', '2024-01-04', 'done', '0123456789abcdef', 42, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP '2024-01-05 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', NULL, NULL);

-- publish an hour
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."daily" AS SELECT * FROM "refill_stage"."marts__hourly__3" LIMIT 0;
DELETE FROM "marts"."daily" WHERE "ts" >= TIMESTAMP '2024-01-05 06:00:00' AND "ts" < TIMESTAMP '2024-01-05 07:00:00';
INSERT INTO "marts"."daily" BY NAME SELECT * FROM "refill_stage"."marts__hourly__3";

-- publish list values
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."daily" AS SELECT * FROM "refill_stage"."marts__by_region__4" LIMIT 0;
DELETE FROM "marts"."daily" WHERE "region" IN ('eu', 'it''s');
INSERT INTO "marts"."daily" BY NAME SELECT * FROM "refill_stage"."marts__by_region__4";

-- publish a whole table
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."daily" AS SELECT * FROM "refill_stage"."marts__all__5" LIMIT 0;
DELETE FROM "marts"."daily" WHERE 1 = 1;
INSERT INTO "marts"."daily" BY NAME SELECT * FROM "refill_stage"."marts__all__5";

-- publish two tables together
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."daily" AS SELECT * FROM "refill_stage"."marts__daily__6" LIMIT 0;
DELETE FROM "marts"."daily" WHERE "order_date" >= DATE '2024-01-02' AND "order_date" < DATE '2024-01-03';
INSERT INTO "marts"."daily" BY NAME SELECT * FROM "refill_stage"."marts__daily__6";
DELETE FROM "refill"."partitions" WHERE model = 'marts.daily' AND partition_key IN ('2024-01-02');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.daily', '2024-01-02', 'done', '0123456789abcdef', 42, '20240105T060708Z-abcdef', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', TIMESTAMP '2024-01-05 06:07:08', NULL, NULL);
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."monthly" AS SELECT * FROM "refill_stage"."marts__monthly__7" LIMIT 0;
DELETE FROM "marts"."monthly" WHERE "month_start" >= DATE '2024-01-01' AND "month_start" < DATE '2024-02-01';
INSERT INTO "marts"."monthly" BY NAME SELECT * FROM "refill_stage"."marts__monthly__7";

-- overlay
CREATE VIEW "refill_stage"."marts__daily__overlay" AS
SELECT * FROM "marts"."daily" WHERE NOT coalesce("order_date" >= DATE '2024-01-02' AND "order_date" < DATE '2024-01-03', FALSE) AND NOT coalesce("order_date" >= DATE '2024-01-02' AND "order_date" < DATE '2024-01-05', FALSE)
UNION ALL BY NAME
SELECT * FROM "refill_stage"."marts__daily__1"
UNION ALL BY NAME
SELECT * FROM "refill_stage"."marts__daily__2";

-- seed
CREATE SCHEMA IF NOT EXISTS "raw";
CREATE OR REPLACE TABLE "raw"."people" ("id" BIGINT, "name" VARCHAR, "day" DATE);
INSERT INTO "raw"."people" VALUES
  (1, 'O''Brien', DATE '2024-01-02'),
  (2, NULL, DATE '2024-01-03');

