-- refill run --from 2024-01-01 --to 2024-01-03 --now=2024-02-01 --concurrency 1
ATTACH ':memory:' AS "refill_stages";
CREATE SCHEMA "refill_stages"."refill_stage";
SELECT current_database();
SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND database_name = current_database(); -- args: "refill"
SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND database_name = current_database(); -- args: "refill"
SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND database_name = current_database(); -- args: "refill"
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
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.customer_lifetime';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.customer_lifetime';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.customer_lifetime', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.customer_revenue_to_date';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.customer_revenue_to_date';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.customer_revenue_to_date', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.daily_revenue';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.daily_revenue';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.daily_revenue', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.revenue_by_region';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.revenue_by_region';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.revenue_by_region', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.rolling_revenue';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.rolling_revenue';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.rolling_revenue', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'staging.orders';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'staging.orders';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('staging.orders', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
-- begin
DELETE FROM "refill"."runs" WHERE run_id = 'RUN-ID';
INSERT INTO "refill"."runs" ("run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error") VALUES ('RUN-ID', 'dev', 'running', '{"from":"2024-01-01","to":"2024-01-03","now":"2024-02-01T00:00:00Z","shape":{"split_failed":true,"concurrency":1,"retries":2}}', 'HOST', PID, TIMESTAMP 'NOW', NULL, 0, 0, 0, NULL);
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" ORDER BY table_name;
SELECT "run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error" FROM "refill"."runs" ORDER BY started_at DESC, run_id DESC LIMIT 100;
SELECT database_name, table_name, 'TABLE' AS kind FROM duckdb_tables() WHERE schema_name = $1 AND database_name <> $2
UNION ALL SELECT database_name, view_name, 'VIEW' FROM duckdb_views() WHERE schema_name = $1 AND database_name <> $2 AND NOT internal
ORDER BY kind DESC, table_name; -- args: "refill_stage", "refill_defer"
SELECT "model", "fingerprint", "text", "created_at", "accepted_from", "accepted_at", "accepted_partitions" FROM "refill"."versions" WHERE model IN ('staging.orders', 'marts.customer_lifetime', 'marts.customer_revenue_to_date', 'marts.daily_revenue', 'marts.revenue_by_region', 'marts.rolling_revenue') ORDER BY model, created_at;
-- begin
DELETE FROM "refill"."versions" WHERE (model, fingerprint) IN (('marts.customer_lifetime', 'b624c74e37ff989c'), ('marts.customer_revenue_to_date', '651061f7a6f39e49'), ('marts.daily_revenue', 'bb48f97c0623a0dd'), ('marts.revenue_by_region', 'cc2639125f22340c'), ('marts.rolling_revenue', '8203ec07a89597c8'), ('staging.orders', 'd65c6ba081c12e82'));
INSERT INTO "refill"."versions" ("model", "fingerprint", "text", "created_at", "accepted_from", "accepted_at", "accepted_partitions") VALUES
  ('marts.customer_lifetime', 'b624c74e37ff989c', 'model: marts.customer_lifetime
table: "marts"."customer_lifetime"
dialect: duckdb
ref: staging.orders -> "staging"."orders"
source: raw.customers -> "raw"."customers"

SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN''s alias of them.
FROM (SELECT customer_id, amount, order_date FROM {{ ref("staging.orders") }}) AS o
JOIN {{ source("raw.customers") }} AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name
', TIMESTAMP 'NOW', NULL, NULL, NULL),
  ('marts.customer_revenue_to_date', '651061f7a6f39e49', 'model: marts.customer_revenue_to_date
table: "marts"."customer_revenue_to_date"
dialect: duckdb
partition_by: order_date
grain: day
partition_type: date
column order_date: date
column customer_id: bigint
column orders_to_date: bigint
column revenue_to_date: double
ref: staging.orders -> "staging"."orders"

-- Yesterday''s totals plus today''s orders. A UNION ALL keeps this portable:
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
', TIMESTAMP 'NOW', NULL, NULL, NULL),
  ('marts.daily_revenue', 'bb48f97c0623a0dd', 'model: marts.daily_revenue
table: "marts"."daily_revenue"
dialect: duckdb
partition_by: order_date
grain: day
partition_type: date
ref: staging.orders -> "staging"."orders"

SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = ''returned'' THEN amount ELSE 0 END) AS returned
FROM {{ ref("staging.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
GROUP BY order_date
', TIMESTAMP 'NOW', NULL, NULL, NULL),
  ('marts.revenue_by_region', 'cc2639125f22340c', 'model: marts.revenue_by_region
table: "marts"."revenue_by_region"
dialect: duckdb
partition_by: region
values: [eu us apac]
ref: staging.orders -> "staging"."orders"

SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM {{ ref("staging.orders") }}
WHERE region = {{ partition }}
GROUP BY region
', TIMESTAMP 'NOW', NULL, NULL, NULL),
  ('marts.rolling_revenue', '8203ec07a89597c8', 'model: marts.rolling_revenue
table: "marts"."rolling_revenue"
dialect: duckdb
partition_by: day
grain: day
partition_type: date
ref: daily_revenue -> "marts"."daily_revenue"

SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM {{ ref("daily_revenue") }} AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= {{ date_add(start, -6, "day") }} AND d.order_date < {{ end }}
  AND d.order_date + o.n >= {{ start }} AND d.order_date + o.n < {{ end }}
GROUP BY d.order_date + o.n
', TIMESTAMP 'NOW', NULL, NULL, NULL),
  ('staging.orders', 'd65c6ba081c12e82', 'model: staging.orders
table: "staging"."orders"
dialect: duckdb
partition_by: order_date
grain: day
partition_type: date
source: raw.orders -> "raw"."orders"
var: min_amount = 10

SELECT order_id, customer_id, order_date, amount, status, region
FROM {{ source("raw.orders") }}
WHERE order_date >= {{ start }} AND order_date < {{ end }}
  AND amount >= {{ var("min_amount") }}
  AND status <> ''test''
', TIMESTAMP 'NOW', NULL, NULL, NULL);
-- commit
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "staging", "orders"
DESCRIBE SELECT order_id, customer_id, order_date, amount, status, region
FROM "raw"."orders"
WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2024-01-04'
  AND amount >= 10
  AND status <> 'test';
CREATE TABLE "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" AS
SELECT order_id, customer_id, order_date, amount, status, region
FROM "raw"."orders"
WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2024-01-04'
  AND amount >= 10
  AND status <> 'test';
SELECT * FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" LIMIT 0;
SELECT "order_date" AS refill_bucket, count(*) AS refill_n, min("order_date") AS refill_lo, max("order_date") AS refill_hi FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" GROUP BY "order_date";
SELECT sum(CASE WHEN "order_id" IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN "order_date" IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN "amount" IS NULL THEN 1 ELSE 0 END) FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1";
SELECT "order_id", count(*) AS refill_n FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" GROUP BY "order_id" HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
SELECT "status", count(*) AS refill_n FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" WHERE "status" NOT IN ('placed', 'shipped', 'returned') GROUP BY "status" ORDER BY refill_n DESC LIMIT 5;
-- begin
CREATE SCHEMA IF NOT EXISTS "staging";
CREATE TABLE IF NOT EXISTS "staging"."orders" AS SELECT * FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" LIMIT 0;
DELETE FROM "staging"."orders" WHERE "order_date" >= DATE '2024-01-01' AND "order_date" < DATE '2024-01-04';
INSERT INTO "staging"."orders" BY NAME SELECT * FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1";
DELETE FROM "refill"."partitions" WHERE "model" = 'staging.orders' AND "partition_key" IN ('2024-01-01', '2024-01-02', '2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('staging.orders', '2024-01-01', 'done', 'd65c6ba081c12e82', 30, 'RUN-ID', 1, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL),
  ('staging.orders', '2024-01-02', 'done', 'd65c6ba081c12e82', 27, 'RUN-ID', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL),
  ('staging.orders', '2024-01-03', 'done', 'd65c6ba081c12e82', 25, 'RUN-ID', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "customer_lifetime"
DESCRIBE SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM "staging"."orders") AS o
JOIN "raw"."customers" AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name;
CREATE TABLE "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX2" AS
SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM "staging"."orders") AS o
JOIN "raw"."customers" AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name;
SELECT * FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX2" LIMIT 0;
SELECT count(*) FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX2";
SELECT "customer_id", count(*) AS refill_n FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX2" GROUP BY "customer_id" HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
-- begin
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."customer_lifetime" AS SELECT * FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX2" LIMIT 0;
DELETE FROM "marts"."customer_lifetime" WHERE 1 = 1;
INSERT INTO "marts"."customer_lifetime" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX2";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.customer_lifetime' AND "partition_key" IN ('all');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.customer_lifetime', 'all', 'done', 'b624c74e37ff989c', 71, 'RUN-ID', 1, NULL, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX2";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "customer_revenue_to_date"
-- begin
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."customer_revenue_to_date" ("order_date" DATE, "customer_id" BIGINT, "orders_to_date" BIGINT, "revenue_to_date" DOUBLE);
-- commit
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "customer_revenue_to_date"
DESCRIBE -- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT DATE '2024-01-01' AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM "staging"."orders"
  WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2024-01-02'
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM "marts"."customer_revenue_to_date"
  WHERE order_date = DATE '2023-12-31'
) AS totals
GROUP BY customer_id;
CREATE TABLE "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX3" AS
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT DATE '2024-01-01' AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM "staging"."orders"
  WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2024-01-02'
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM "marts"."customer_revenue_to_date"
  WHERE order_date = DATE '2023-12-31'
) AS totals
GROUP BY customer_id;
SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX3" LIMIT 0;
SELECT "order_date" AS refill_bucket, count(*) AS refill_n, min("order_date") AS refill_lo, max("order_date") AS refill_hi FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX3" GROUP BY "order_date";
-- begin
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."customer_revenue_to_date" AS SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX3" LIMIT 0;
DELETE FROM "marts"."customer_revenue_to_date" WHERE "order_date" >= DATE '2024-01-01' AND "order_date" < DATE '2024-01-02';
INSERT INTO "marts"."customer_revenue_to_date" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX3";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.customer_revenue_to_date' AND "partition_key" IN ('2024-01-01');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.customer_revenue_to_date', '2024-01-01', 'done', '651061f7a6f39e49', 28, 'RUN-ID', 1, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX3";
CREATE TABLE "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4" AS
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT DATE '2024-01-02' AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM "staging"."orders"
  WHERE order_date >= DATE '2024-01-02' AND order_date < DATE '2024-01-03'
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM "marts"."customer_revenue_to_date"
  WHERE order_date = DATE '2024-01-01'
) AS totals
GROUP BY customer_id;
SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4" LIMIT 0;
SELECT "order_date" AS refill_bucket, count(*) AS refill_n, min("order_date") AS refill_lo, max("order_date") AS refill_hi FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4" GROUP BY "order_date";
-- begin
DELETE FROM "marts"."customer_revenue_to_date" WHERE "order_date" >= DATE '2024-01-02' AND "order_date" < DATE '2024-01-03';
INSERT INTO "marts"."customer_revenue_to_date" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.customer_revenue_to_date' AND "partition_key" IN ('2024-01-02');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.customer_revenue_to_date', '2024-01-02', 'done', '651061f7a6f39e49', 51, 'RUN-ID', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4";
CREATE TABLE "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX5" AS
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT DATE '2024-01-03' AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM "staging"."orders"
  WHERE order_date >= DATE '2024-01-03' AND order_date < DATE '2024-01-04'
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM "marts"."customer_revenue_to_date"
  WHERE order_date = DATE '2024-01-02'
) AS totals
GROUP BY customer_id;
SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX5" LIMIT 0;
SELECT "order_date" AS refill_bucket, count(*) AS refill_n, min("order_date") AS refill_lo, max("order_date") AS refill_hi FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX5" GROUP BY "order_date";
-- begin
DELETE FROM "marts"."customer_revenue_to_date" WHERE "order_date" >= DATE '2024-01-03' AND "order_date" < DATE '2024-01-04';
INSERT INTO "marts"."customer_revenue_to_date" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX5";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.customer_revenue_to_date' AND "partition_key" IN ('2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.customer_revenue_to_date', '2024-01-03', 'done', '651061f7a6f39e49', 71, 'RUN-ID', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX5";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "daily_revenue"
DESCRIBE SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM "staging"."orders"
WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2024-01-04'
GROUP BY order_date;
CREATE TABLE "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" AS
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM "staging"."orders"
WHERE order_date >= DATE '2024-01-01' AND order_date < DATE '2024-01-04'
GROUP BY order_date;
SELECT * FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" LIMIT 0;
SELECT "order_date" AS refill_bucket, count(*) AS refill_n, min("order_date") AS refill_lo, max("order_date") AS refill_hi FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" GROUP BY "order_date";
SELECT sum(CASE WHEN "order_date" IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN "revenue" IS NULL THEN 1 ELSE 0 END) FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6";
SELECT "order_date", count(*) AS refill_n FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" GROUP BY "order_date" HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
-- begin
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."daily_revenue" AS SELECT * FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" LIMIT 0;
DELETE FROM "marts"."daily_revenue" WHERE "order_date" >= DATE '2024-01-01' AND "order_date" < DATE '2024-01-04';
INSERT INTO "marts"."daily_revenue" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.daily_revenue' AND "partition_key" IN ('2024-01-01', '2024-01-02', '2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.daily_revenue', '2024-01-01', 'done', 'bb48f97c0623a0dd', 1, 'RUN-ID', 1, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL),
  ('marts.daily_revenue', '2024-01-02', 'done', 'bb48f97c0623a0dd', 1, 'RUN-ID', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL),
  ('marts.daily_revenue', '2024-01-03', 'done', 'bb48f97c0623a0dd', 1, 'RUN-ID', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "revenue_by_region"
DESCRIBE SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "staging"."orders"
WHERE region = 'eu'
GROUP BY region;
-- begin
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."revenue_by_region" ("region" VARCHAR, "orders" BIGINT, "revenue" DOUBLE);
DELETE FROM "marts"."revenue_by_region" WHERE "region" IN ('eu');
INSERT INTO "marts"."revenue_by_region" BY NAME SELECT * FROM (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "staging"."orders"
WHERE region = 'eu'
GROUP BY region
) AS refill_query
WHERE CASE WHEN coalesce("region" IN ('eu'), FALSE) THEN TRUE ELSE error('refill: a row lies outside the window') END;
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.revenue_by_region' AND "partition_key" IN ('eu');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.revenue_by_region', 'eu', 'done', 'cc2639125f22340c', 1, 'RUN-ID', 1, NULL, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "revenue_by_region"
DESCRIBE SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "staging"."orders"
WHERE region = 'us'
GROUP BY region;
-- begin
DELETE FROM "marts"."revenue_by_region" WHERE "region" IN ('us');
INSERT INTO "marts"."revenue_by_region" BY NAME SELECT * FROM (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "staging"."orders"
WHERE region = 'us'
GROUP BY region
) AS refill_query
WHERE CASE WHEN coalesce("region" IN ('us'), FALSE) THEN TRUE ELSE error('refill: a row lies outside the window') END;
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.revenue_by_region' AND "partition_key" IN ('us');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.revenue_by_region', 'us', 'done', 'cc2639125f22340c', 1, 'RUN-ID', 1, NULL, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
DESCRIBE SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "staging"."orders"
WHERE region = 'apac'
GROUP BY region;
-- begin
DELETE FROM "marts"."revenue_by_region" WHERE "region" IN ('apac');
INSERT INTO "marts"."revenue_by_region" BY NAME SELECT * FROM (
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "staging"."orders"
WHERE region = 'apac'
GROUP BY region
) AS refill_query
WHERE CASE WHEN coalesce("region" IN ('apac'), FALSE) THEN TRUE ELSE error('refill: a row lies outside the window') END;
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.revenue_by_region' AND "partition_key" IN ('apac');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.revenue_by_region', 'apac', 'done', 'cc2639125f22340c', 1, 'RUN-ID', 1, NULL, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "rolling_revenue"
DESCRIBE SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM "marts"."daily_revenue" AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= DATE '2023-12-26' AND d.order_date < DATE '2024-01-04'
  AND d.order_date + o.n >= DATE '2024-01-01' AND d.order_date + o.n < DATE '2024-01-04'
GROUP BY d.order_date + o.n;
-- begin
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."rolling_revenue" ("day" DATE, "revenue_7d" DOUBLE, "orders_7d" HUGEINT);
DELETE FROM "marts"."rolling_revenue" WHERE "day" >= DATE '2024-01-01' AND "day" < DATE '2024-01-04';
INSERT INTO "marts"."rolling_revenue" BY NAME SELECT * FROM (
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM "marts"."daily_revenue" AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= DATE '2023-12-26' AND d.order_date < DATE '2024-01-04'
  AND d.order_date + o.n >= DATE '2024-01-01' AND d.order_date + o.n < DATE '2024-01-04'
GROUP BY d.order_date + o.n
) AS refill_query
WHERE CASE WHEN coalesce("day" >= DATE '2024-01-01' AND "day" < DATE '2024-01-04', FALSE) THEN TRUE ELSE error('refill: a row lies outside the window') END;
SELECT count(*), "day", "day" FROM "marts"."rolling_revenue" WHERE "day" >= DATE '2024-01-01' AND "day" < DATE '2024-01-04' GROUP BY "day";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.rolling_revenue' AND "partition_key" IN ('2024-01-01', '2024-01-02', '2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.rolling_revenue', '2024-01-01', 'done', '8203ec07a89597c8', 1, 'RUN-ID', 1, TIMESTAMP '2024-01-01 00:00:00', TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL),
  ('marts.rolling_revenue', '2024-01-02', 'done', '8203ec07a89597c8', 1, 'RUN-ID', 1, TIMESTAMP '2024-01-02 00:00:00', TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL),
  ('marts.rolling_revenue', '2024-01-03', 'done', '8203ec07a89597c8', 1, 'RUN-ID', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
-- begin
DELETE FROM "refill"."runs" WHERE run_id = 'RUN-ID';
INSERT INTO "refill"."runs" ("run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error") VALUES ('RUN-ID', 'dev', 'succeeded', '{"from":"2024-01-01","to":"2024-01-03","now":"2024-02-01T00:00:00Z","shape":{"split_failed":true,"concurrency":1,"retries":2}}', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', 16, 0, 0, NULL);
-- commit
DELETE FROM "refill"."leases" WHERE run_id = 'RUN-ID';

-- refill run --from 2024-01-03 --to 2024-01-03 --now=2024-02-01 --mode all --publish together --concurrency 1
ATTACH ':memory:' AS "refill_stages";
CREATE SCHEMA "refill_stages"."refill_stage";
SELECT current_database();
SELECT table_name FROM duckdb_tables() WHERE schema_name = ? AND database_name = current_database(); -- args: "refill"
SELECT "model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark" FROM "refill"."partitions" WHERE model IN ('marts.customer_lifetime', 'marts.customer_revenue_to_date', 'marts.daily_revenue', 'marts.monthly_revenue', 'marts.revenue_by_region', 'marts.rolling_revenue', 'staging.orders');
SELECT table_schema, table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE' AND table_catalog = current_database();
SELECT 'staging.orders', count(*) FROM "staging"."orders"
UNION ALL SELECT 'marts.customer_lifetime', count(*) FROM "marts"."customer_lifetime"
UNION ALL SELECT 'marts.customer_revenue_to_date', count(*) FROM "marts"."customer_revenue_to_date"
UNION ALL SELECT 'marts.daily_revenue', count(*) FROM "marts"."daily_revenue"
UNION ALL SELECT 'marts.revenue_by_region', count(*) FROM "marts"."revenue_by_region"
UNION ALL SELECT 'marts.rolling_revenue', count(*) FROM "marts"."rolling_revenue";
SELECT "model", "fingerprint", "text", "created_at", "accepted_from", "accepted_at", "accepted_partitions" FROM "refill"."versions" WHERE model IN ('staging.orders', 'marts.customer_lifetime', 'marts.customer_revenue_to_date', 'marts.daily_revenue', 'marts.monthly_revenue', 'marts.revenue_by_region', 'marts.rolling_revenue') ORDER BY model, created_at;
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.customer_lifetime';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.customer_lifetime';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.customer_lifetime', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.customer_revenue_to_date';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.customer_revenue_to_date';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.customer_revenue_to_date', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.daily_revenue';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.daily_revenue';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.daily_revenue', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.revenue_by_region';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.revenue_by_region';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.revenue_by_region', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'marts.rolling_revenue';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'marts.rolling_revenue';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('marts.rolling_revenue', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" WHERE table_name = 'staging.orders';
-- begin
DELETE FROM "refill"."leases" WHERE table_name = 'staging.orders';
INSERT INTO "refill"."leases" ("table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at") VALUES ('staging.orders', 'RUN-ID', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW');
-- commit
-- begin
DELETE FROM "refill"."runs" WHERE run_id = 'RUN-ID';
INSERT INTO "refill"."runs" ("run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error") VALUES ('RUN-ID', 'dev', 'running', '{"from":"2024-01-03","to":"2024-01-03","mode":"all","now":"2024-02-01T00:00:00Z","shape":{"together":true,"split_failed":true,"concurrency":1,"retries":2}}', 'HOST', PID, TIMESTAMP 'NOW', NULL, 0, 0, 0, NULL);
-- commit
SELECT "table_name", "run_id", "host", "pid", "acquired_at", "heartbeat_at", "expires_at" FROM "refill"."leases" ORDER BY table_name;
SELECT "run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error" FROM "refill"."runs" ORDER BY started_at DESC, run_id DESC LIMIT 100;
SELECT database_name, table_name, 'TABLE' AS kind FROM duckdb_tables() WHERE schema_name = $1 AND database_name <> $2
UNION ALL SELECT database_name, view_name, 'VIEW' FROM duckdb_views() WHERE schema_name = $1 AND database_name <> $2 AND NOT internal
ORDER BY kind DESC, table_name; -- args: "refill_stage", "refill_defer"
SELECT "model", "fingerprint", "text", "created_at", "accepted_from", "accepted_at", "accepted_partitions" FROM "refill"."versions" WHERE model IN ('staging.orders', 'marts.customer_lifetime', 'marts.customer_revenue_to_date', 'marts.daily_revenue', 'marts.revenue_by_region', 'marts.rolling_revenue') ORDER BY model, created_at;
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "staging", "orders"
DESCRIBE SELECT order_id, customer_id, order_date, amount, status, region
FROM "raw"."orders"
WHERE order_date >= DATE '2024-01-03' AND order_date < DATE '2024-01-04'
  AND amount >= 10
  AND status <> 'test';
CREATE TABLE "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" AS
SELECT order_id, customer_id, order_date, amount, status, region
FROM "raw"."orders"
WHERE order_date >= DATE '2024-01-03' AND order_date < DATE '2024-01-04'
  AND amount >= 10
  AND status <> 'test';
SELECT * FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" LIMIT 0;
SELECT "order_date" AS refill_bucket, count(*) AS refill_n, min("order_date") AS refill_lo, max("order_date") AS refill_hi FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" GROUP BY "order_date";
SELECT sum(CASE WHEN "order_id" IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN "order_date" IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN "amount" IS NULL THEN 1 ELSE 0 END) FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1";
SELECT "order_id", count(*) AS refill_n FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" GROUP BY "order_id" HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
SELECT "status", count(*) AS refill_n FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" WHERE "status" NOT IN ('placed', 'shipped', 'returned') GROUP BY "status" ORDER BY refill_n DESC LIMIT 5;
SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ? AND table_catalog = current_database(); -- args: "staging", "orders"
CREATE VIEW "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2" AS
SELECT * FROM "warehouse"."staging"."orders" WHERE NOT coalesce("order_date" >= DATE '2024-01-03' AND "order_date" < DATE '2024-01-04', FALSE)
UNION ALL BY NAME
SELECT * FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "customer_lifetime"
DESCRIBE SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2") AS o
JOIN "raw"."customers" AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name;
CREATE TABLE "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX3" AS
SELECT o.customer_id,
       c.name,
       count(*) AS orders,
       sum(o.amount) AS revenue,
       min(o.order_date) AS first_order
-- The subquery keeps this portable to a sharded ClickHouse 18.16 cluster,
-- whose Distributed tables lose a JOIN's alias of them.
FROM (SELECT customer_id, amount, order_date FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2") AS o
JOIN "raw"."customers" AS c ON c.customer_id = o.customer_id
GROUP BY o.customer_id, c.name;
SELECT * FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX3" LIMIT 0;
SELECT count(*) FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX3";
SELECT "customer_id", count(*) AS refill_n FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX3" GROUP BY "customer_id" HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "customer_revenue_to_date"
DESCRIBE -- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT DATE '2024-01-03' AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
  WHERE order_date >= DATE '2024-01-03' AND order_date < DATE '2024-01-04'
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM "marts"."customer_revenue_to_date"
  WHERE order_date = DATE '2024-01-02'
) AS totals
GROUP BY customer_id;
CREATE TABLE "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4" AS
-- Yesterday's totals plus today's orders. A UNION ALL keeps this portable:
-- ClickHouse 18.16 has no WITH subqueries and fills unmatched join columns
-- with defaults instead of NULLs.
SELECT DATE '2024-01-03' AS order_date,
       customer_id,
       sum(orders) AS orders_to_date,
       sum(revenue) AS revenue_to_date
FROM (
  SELECT customer_id, CAST(count(*) AS BIGINT) AS orders, CAST(sum(amount) AS DOUBLE) AS revenue
  FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
  WHERE order_date >= DATE '2024-01-03' AND order_date < DATE '2024-01-04'
  GROUP BY customer_id
  UNION ALL
  SELECT customer_id, orders_to_date, revenue_to_date
  FROM "marts"."customer_revenue_to_date"
  WHERE order_date = DATE '2024-01-02'
) AS totals
GROUP BY customer_id;
SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4" LIMIT 0;
SELECT "order_date" AS refill_bucket, count(*) AS refill_n, min("order_date") AS refill_lo, max("order_date") AS refill_hi FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4" GROUP BY "order_date";
SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ? AND table_catalog = current_database(); -- args: "marts", "customer_revenue_to_date"
CREATE VIEW "refill_stages"."refill_stage"."marts__customer_revenue_to_date__v_RUN_XXXXXX5" AS
SELECT * FROM "warehouse"."marts"."customer_revenue_to_date" WHERE NOT coalesce("order_date" >= DATE '2024-01-03' AND "order_date" < DATE '2024-01-04', FALSE)
UNION ALL BY NAME
SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "daily_revenue"
DESCRIBE SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
WHERE order_date >= DATE '2024-01-03' AND order_date < DATE '2024-01-04'
GROUP BY order_date;
CREATE TABLE "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" AS
SELECT order_date,
       count(*) AS orders,
       sum(amount) AS revenue,
       sum(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned
FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
WHERE order_date >= DATE '2024-01-03' AND order_date < DATE '2024-01-04'
GROUP BY order_date;
SELECT * FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" LIMIT 0;
SELECT "order_date" AS refill_bucket, count(*) AS refill_n, min("order_date") AS refill_lo, max("order_date") AS refill_hi FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" GROUP BY "order_date";
SELECT sum(CASE WHEN "order_date" IS NULL THEN 1 ELSE 0 END), sum(CASE WHEN "revenue" IS NULL THEN 1 ELSE 0 END) FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6";
SELECT "order_date", count(*) AS refill_n FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" GROUP BY "order_date" HAVING count(*) > 1 ORDER BY refill_n DESC LIMIT 3;
SELECT count(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = ? AND table_catalog = current_database(); -- args: "marts", "daily_revenue"
CREATE VIEW "refill_stages"."refill_stage"."marts__daily_revenue__v_RUN_XXXXXX7" AS
SELECT * FROM "warehouse"."marts"."daily_revenue" WHERE NOT coalesce("order_date" >= DATE '2024-01-03' AND "order_date" < DATE '2024-01-04', FALSE)
UNION ALL BY NAME
SELECT * FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "revenue_by_region"
DESCRIBE SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
WHERE region = 'eu'
GROUP BY region;
CREATE TABLE "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX8" AS
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
WHERE region = 'eu'
GROUP BY region;
SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX8" LIMIT 0;
SELECT "region" AS refill_bucket, count(*) AS refill_n, min("region") AS refill_lo, max("region") AS refill_hi FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX8" GROUP BY "region";
DESCRIBE SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
WHERE region = 'us'
GROUP BY region;
CREATE TABLE "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX9" AS
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
WHERE region = 'us'
GROUP BY region;
SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX9" LIMIT 0;
SELECT "region" AS refill_bucket, count(*) AS refill_n, min("region") AS refill_lo, max("region") AS refill_hi FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX9" GROUP BY "region";
DESCRIBE SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
WHERE region = 'apac'
GROUP BY region;
CREATE TABLE "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX10" AS
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2"
WHERE region = 'apac'
GROUP BY region;
SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX10" LIMIT 0;
SELECT "region" AS refill_bucket, count(*) AS refill_n, min("region") AS refill_lo, max("region") AS refill_hi FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX10" GROUP BY "region";
SELECT column_name, data_type FROM duckdb_columns() WHERE schema_name = ? AND table_name = ? AND database_name = current_database() ORDER BY column_index; -- args: "marts", "rolling_revenue"
DESCRIBE SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM "refill_stages"."refill_stage"."marts__daily_revenue__v_RUN_XXXXXX7" AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= DATE '2023-12-28' AND d.order_date < DATE '2024-01-04'
  AND d.order_date + o.n >= DATE '2024-01-03' AND d.order_date + o.n < DATE '2024-01-04'
GROUP BY d.order_date + o.n;
CREATE TABLE "refill_stages"."refill_stage"."marts__rolling_revenue__s_RUN_XXXXXX11" AS
SELECT d.order_date + o.n AS day,
       sum(d.revenue) AS revenue_7d,
       sum(d.orders) AS orders_7d
FROM "refill_stages"."refill_stage"."marts__daily_revenue__v_RUN_XXXXXX7" AS d
CROSS JOIN (SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
            UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6) AS o
WHERE d.order_date >= DATE '2023-12-28' AND d.order_date < DATE '2024-01-04'
  AND d.order_date + o.n >= DATE '2024-01-03' AND d.order_date + o.n < DATE '2024-01-04'
GROUP BY d.order_date + o.n;
SELECT * FROM "refill_stages"."refill_stage"."marts__rolling_revenue__s_RUN_XXXXXX11" LIMIT 0;
SELECT "day" AS refill_bucket, count(*) AS refill_n, min("day") AS refill_lo, max("day") AS refill_hi FROM "refill_stages"."refill_stage"."marts__rolling_revenue__s_RUN_XXXXXX11" GROUP BY "day";
-- begin
CREATE SCHEMA IF NOT EXISTS "staging";
CREATE TABLE IF NOT EXISTS "staging"."orders" AS SELECT * FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1" LIMIT 0;
DELETE FROM "staging"."orders" WHERE "order_date" >= DATE '2024-01-03' AND "order_date" < DATE '2024-01-04';
INSERT INTO "staging"."orders" BY NAME SELECT * FROM "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1";
DELETE FROM "refill"."partitions" WHERE "model" = 'staging.orders' AND "partition_key" IN ('2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('staging.orders', '2024-01-03', 'done', 'd65c6ba081c12e82', 25, 'RUN-ID', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."customer_lifetime" AS SELECT * FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX3" LIMIT 0;
DELETE FROM "marts"."customer_lifetime" WHERE 1 = 1;
INSERT INTO "marts"."customer_lifetime" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX3";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.customer_lifetime' AND "partition_key" IN ('all');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.customer_lifetime', 'all', 'done', 'b624c74e37ff989c', 71, 'RUN-ID', 1, NULL, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."customer_revenue_to_date" AS SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4" LIMIT 0;
DELETE FROM "marts"."customer_revenue_to_date" WHERE "order_date" >= DATE '2024-01-03' AND "order_date" < DATE '2024-01-04';
INSERT INTO "marts"."customer_revenue_to_date" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.customer_revenue_to_date' AND "partition_key" IN ('2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.customer_revenue_to_date', '2024-01-03', 'done', '651061f7a6f39e49', 71, 'RUN-ID', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."daily_revenue" AS SELECT * FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6" LIMIT 0;
DELETE FROM "marts"."daily_revenue" WHERE "order_date" >= DATE '2024-01-03' AND "order_date" < DATE '2024-01-04';
INSERT INTO "marts"."daily_revenue" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.daily_revenue' AND "partition_key" IN ('2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.daily_revenue', '2024-01-03', 'done', 'bb48f97c0623a0dd', 1, 'RUN-ID', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."revenue_by_region" AS SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX8" LIMIT 0;
DELETE FROM "marts"."revenue_by_region" WHERE "region" IN ('eu');
INSERT INTO "marts"."revenue_by_region" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX8";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.revenue_by_region' AND "partition_key" IN ('eu');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.revenue_by_region', 'eu', 'done', 'cc2639125f22340c', 1, 'RUN-ID', 1, NULL, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."revenue_by_region" AS SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX9" LIMIT 0;
DELETE FROM "marts"."revenue_by_region" WHERE "region" IN ('us');
INSERT INTO "marts"."revenue_by_region" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX9";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.revenue_by_region' AND "partition_key" IN ('us');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.revenue_by_region', 'us', 'done', 'cc2639125f22340c', 1, 'RUN-ID', 1, NULL, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."revenue_by_region" AS SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX10" LIMIT 0;
DELETE FROM "marts"."revenue_by_region" WHERE "region" IN ('apac');
INSERT INTO "marts"."revenue_by_region" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX10";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.revenue_by_region' AND "partition_key" IN ('apac');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.revenue_by_region', 'apac', 'done', 'cc2639125f22340c', 1, 'RUN-ID', 1, NULL, TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
CREATE SCHEMA IF NOT EXISTS "marts";
CREATE TABLE IF NOT EXISTS "marts"."rolling_revenue" AS SELECT * FROM "refill_stages"."refill_stage"."marts__rolling_revenue__s_RUN_XXXXXX11" LIMIT 0;
DELETE FROM "marts"."rolling_revenue" WHERE "day" >= DATE '2024-01-03' AND "day" < DATE '2024-01-04';
INSERT INTO "marts"."rolling_revenue" BY NAME SELECT * FROM "refill_stages"."refill_stage"."marts__rolling_revenue__s_RUN_XXXXXX11";
DELETE FROM "refill"."partitions" WHERE "model" = 'marts.rolling_revenue' AND "partition_key" IN ('2024-01-03');
INSERT INTO "refill"."partitions" ("model", "partition_key", "state", "fingerprint", "row_count", "run_id", "attempts", "window_start", "window_end", "started_at", "finished_at", "published_at", "error", "watermark") VALUES
  ('marts.rolling_revenue', '2024-01-03', 'done', '8203ec07a89597c8', 1, 'RUN-ID', 1, TIMESTAMP '2024-01-03 00:00:00', TIMESTAMP '2024-01-04 00:00:00', TIMESTAMP 'NOW', TIMESTAMP 'NOW', TIMESTAMP 'NOW', NULL, NULL);
-- commit
DROP VIEW IF EXISTS "refill_stages"."refill_stage"."staging__orders__v_RUN_XXXXXX2";
DROP VIEW IF EXISTS "refill_stages"."refill_stage"."marts__customer_revenue_to_date__v_RUN_XXXXXX5";
DROP VIEW IF EXISTS "refill_stages"."refill_stage"."marts__daily_revenue__v_RUN_XXXXXX7";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."staging__orders__s_RUN_XXXXXX1";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__customer_lifetime__s_RUN_XXXXXX3";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__customer_revenue_to_date__s_RUN_XXXXXX4";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__daily_revenue__s_RUN_XXXXXX6";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX8";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX9";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__revenue_by_region__s_RUN_XXXXXX10";
DROP TABLE IF EXISTS "refill_stages"."refill_stage"."marts__rolling_revenue__s_RUN_XXXXXX11";
-- begin
DELETE FROM "refill"."runs" WHERE run_id = 'RUN-ID';
INSERT INTO "refill"."runs" ("run_id", "target", "status", "selection", "host", "pid", "started_at", "finished_at", "succeeded", "failed", "skipped", "error") VALUES ('RUN-ID', 'dev', 'succeeded', '{"from":"2024-01-03","to":"2024-01-03","mode":"all","now":"2024-02-01T00:00:00Z","shape":{"together":true,"split_failed":true,"concurrency":1,"retries":2}}', 'HOST', PID, TIMESTAMP 'NOW', TIMESTAMP 'NOW', 8, 0, 0, NULL);
-- commit
DELETE FROM "refill"."leases" WHERE run_id = 'RUN-ID';

