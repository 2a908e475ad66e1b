/* refill
description: Customers, renamed. A whole table over a source, so scheduled runs refresh it (by default, on every run).
audits:
  - unique: [customer_id]
*/
SELECT id AS customer_id, first_name, last_name
FROM {{ source("raw.customers") }}
