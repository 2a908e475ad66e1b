/* refill
description: Each user's day on the site, from raw events whose signup dates and amounts are text.
partition_by: day
grain: day
start: 2024-01-01
end: 2024-01-03
*/
SELECT {{ cast_date(ident("event_ts")) }} AS day,
       user_id,
       CAST(count(*) AS BIGINT) AS events,
       min({{ date_trunc("hour", ident("event_ts")) }}) AS first_hour,
       {{ string_agg(ident("section"), " > ", ident("event_ts")) }} AS path,
       min({{ date_diff("day", try_cast(ident("signup_date"), "date"), ident("event_ts")) }}) AS days_since_signup,
       sum({{ try_cast(ident("amount"), "decimal(18,2)") }}) AS revenue,
       CAST(sum(CASE WHEN {{ try_cast(ident("amount"), "decimal(18,2)") }} IS NULL THEN 1 ELSE 0 END) AS BIGINT) AS unparsed_amounts
FROM (
  SELECT user_id, event_ts, signup_date, amount,
         {{ target.adapter == "clickhouse" ? raw("splitByChar('/', page)[2]") : raw("split_part(page, '/', 2)") }} AS section
  FROM {{ source("events") }}
  WHERE event_ts >= {{ cast_timestamp(start) }} AND event_ts < {{ cast_timestamp(end) }}
) AS e
GROUP BY {{ cast_date(ident("event_ts")) }}, user_id
