/* refill
description: Orders per status over every day built, a list model over a daily one.
partition_by: status
values: [placed, shipped, completed, return_pending, returned]
*/
SELECT status, CAST(count(*) AS BIGINT) AS orders, min(order_date) AS first_order, max(order_date) AS last_order
FROM {{ ref("stg_orders") }}
WHERE status = {{ partition }}
GROUP BY status
