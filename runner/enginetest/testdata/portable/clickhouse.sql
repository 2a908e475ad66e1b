SELECT toDate(`event_ts`) AS day,
       user_id,
       CAST(count(*) AS BIGINT) AS events,
       min(toStartOfHour(`event_ts`)) AS first_hour,
       arrayStringConcat(arrayMap(refill_v -> refill_v.2, arraySort(groupArrayIf((`event_ts`, assumeNotNull(toString(`section`))), isNotNull(`section`)))), ' > ') AS path,
       min(dateDiff('day', if(ifNull(toString(toDateOrNull(replaceRegexpAll(ifNull(toString(`signup_date`), ''), '^\\s+|\\s+$', ''))) = substring(replaceRegexpAll(ifNull(toString(`signup_date`), ''), '^\\s+|\\s+$', ''), 1, 10), 0), assumeNotNull(toDateOrNull(replaceRegexpAll(ifNull(toString(`signup_date`), ''), '^\\s+|\\s+$', ''))), NULL), `event_ts`)) AS days_since_signup,
       sum(if(match(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?([0-9]{1,16}(\\.[0-9]*)?|\\.[0-9]+)$') AND abs(round(toDecimal128(if(match(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?([0-9]{1,16}(\\.[0-9]*)?|\\.[0-9]+)$'), extract(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?[0-9]*(?:\\.[0-9]{0,3})?'), '0'), 3), 2)) < toDecimal128('10000000000000000', 0), CAST(round(toDecimal128(if(match(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?([0-9]{1,16}(\\.[0-9]*)?|\\.[0-9]+)$'), extract(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?[0-9]*(?:\\.[0-9]{0,3})?'), '0'), 3), 2) AS Decimal(18, 2)), NULL)) AS revenue,
       CAST(sum(CASE WHEN if(match(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?([0-9]{1,16}(\\.[0-9]*)?|\\.[0-9]+)$') AND abs(round(toDecimal128(if(match(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?([0-9]{1,16}(\\.[0-9]*)?|\\.[0-9]+)$'), extract(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?[0-9]*(?:\\.[0-9]{0,3})?'), '0'), 3), 2)) < toDecimal128('10000000000000000', 0), CAST(round(toDecimal128(if(match(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?([0-9]{1,16}(\\.[0-9]*)?|\\.[0-9]+)$'), extract(replaceRegexpAll(ifNull(toString(`amount`), ''), '^\\s+|\\s+$', ''), '^[-+]?[0-9]*(?:\\.[0-9]{0,3})?'), '0'), 3), 2) AS Decimal(18, 2)), NULL) IS NULL THEN 1 ELSE 0 END) AS BIGINT) AS unparsed_amounts
FROM (
  SELECT user_id, event_ts, signup_date, amount,
         splitByChar('/', page)[2] AS section
  FROM `analytics`.`events`
  WHERE event_ts >= toDateTime('2024-01-02 00:00:00', 'UTC') AND event_ts < toDateTime('2024-01-03 00:00:00', 'UTC')
) AS e
GROUP BY toDate(`event_ts`), user_id;
