\echo Use "ALTER EXTENSION workload UPDATE TO '1.4'" to load this file. \quit

-- workload 1.3 -> 1.4: nobody stalls the shared machinery (SPEC section 5.1).
-- The tick, the background workers and every shared name belong to all
-- tenants: no tenant, and no role outside workload_admin, can stop, stall or
-- starve them.  Claims held through the update keep their fences and leases.
