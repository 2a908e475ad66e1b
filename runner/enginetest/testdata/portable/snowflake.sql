SELECT TO_DATE("EVENT_TS") AS day,
       user_id,
       CAST(count(*) AS BIGINT) AS events,
       min(DATE_TRUNC('HOUR', "EVENT_TS")) AS first_hour,
       COALESCE(LISTAGG(TO_VARCHAR("SECTION"), ' > ') WITHIN GROUP (ORDER BY "EVENT_TS"), '') AS path,
       min(DATEDIFF(day, TRY_CAST(TO_VARCHAR("SIGNUP_DATE") AS DATE), "EVENT_TS")) AS days_since_signup,
       sum(TRY_CAST(TO_VARCHAR("AMOUNT") AS NUMBER(18,2))) AS revenue,
       CAST(sum(CASE WHEN TRY_CAST(TO_VARCHAR("AMOUNT") AS NUMBER(18,2)) IS NULL THEN 1 ELSE 0 END) AS BIGINT) AS unparsed_amounts
FROM (
  SELECT user_id, event_ts, signup_date, amount,
         split_part(page, '/', 2) AS section
  FROM "ANALYTICS"."EVENTS"
  WHERE event_ts >= '2024-01-02 00:00:00'::TIMESTAMP_NTZ AND event_ts < '2024-01-03 00:00:00'::TIMESTAMP_NTZ
) AS e
GROUP BY TO_DATE("EVENT_TS"), user_id;
