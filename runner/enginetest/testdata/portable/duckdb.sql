SELECT CAST("event_ts" AS DATE) AS day,
       user_id,
       CAST(count(*) AS BIGINT) AS events,
       min(date_trunc('hour', "event_ts")) AS first_hour,
       coalesce(string_agg(CAST("section" AS VARCHAR), ' > ' ORDER BY "event_ts"), '') AS path,
       min(date_diff('day', TRY_CAST("signup_date" AS DATE), "event_ts")) AS days_since_signup,
       sum(TRY_CAST("amount" AS DECIMAL(18,2))) AS revenue,
       CAST(sum(CASE WHEN TRY_CAST("amount" AS DECIMAL(18,2)) IS NULL THEN 1 ELSE 0 END) AS BIGINT) AS unparsed_amounts
FROM (
  SELECT user_id, event_ts, signup_date, amount,
         split_part(page, '/', 2) AS section
  FROM "analytics"."events"
  WHERE event_ts >= TIMESTAMP '2024-01-02 00:00:00' AND event_ts < TIMESTAMP '2024-01-03 00:00:00'
) AS e
GROUP BY CAST("event_ts" AS DATE), user_id;
