/* refill
description: Payments in dollars, one partition per payment day.
partition_by: paid_on
grain: day
start: 2018-01-01
batch: 31
*/
SELECT id AS payment_id, order_id, payment_method,
       CAST(amount AS DECIMAL(18, 2)) / 100 AS amount, paid_on
FROM {{ source("raw.payments") }}
WHERE paid_on >= {{ start }} AND paid_on < {{ end }}
