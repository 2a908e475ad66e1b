/* refill
description: All-time revenue per region, one partition per region.
partition_by: region
values: [eu, us, apac]
*/
SELECT region, count(*) AS orders, sum(amount) AS revenue
FROM {{ ref("staging.orders") }}
WHERE region = {{ partition }}
GROUP BY region
