/* refill
description: Each day's orders with their payments by method, and whether each was the customer's first (which reads the customers mart).
partition_by: order_date
grain: day
start: 2018-01-01
audits:
  - unique: [order_id]
*/
SELECT o.order_id, o.customer_id, o.order_date, o.status,
       sum(CASE WHEN p.payment_method = 'credit_card' THEN p.amount ELSE 0 END) AS credit_card_amount,
       sum(CASE WHEN p.payment_method = 'coupon' THEN p.amount ELSE 0 END) AS coupon_amount,
       sum(CASE WHEN p.payment_method = 'bank_transfer' THEN p.amount ELSE 0 END) AS bank_transfer_amount,
       sum(CASE WHEN p.payment_method = 'gift_card' THEN p.amount ELSE 0 END) AS gift_card_amount,
       coalesce(sum(p.amount), 0) AS amount,
       o.order_date = c.first_order AS is_first_order
FROM {{ ref("stg_orders") }} AS o
LEFT JOIN {{ ref("stg_payments") }} AS p
  ON p.order_id = o.order_id AND p.paid_on >= {{ start }} AND p.paid_on < {{ end }}
LEFT JOIN {{ ref("customers") }} AS c ON c.customer_id = o.customer_id
WHERE o.order_date >= {{ start }} AND o.order_date < {{ end }}
GROUP BY o.order_id, o.customer_id, o.order_date, o.status, c.first_order
