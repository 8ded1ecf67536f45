CREATE TABLE wlappname_ran (port int, app text, is_coordinator text);
INSERT INTO wlappname_ran SELECT current_setting('port')::int, current_setting('application_name'),
  (SELECT CASE WHEN count(*) = 0 THEN 'no metadata' ELSE bool_or(groupid = 0 AND nodeport = current_setting('port')::int)::text END FROM pg_dist_node);
