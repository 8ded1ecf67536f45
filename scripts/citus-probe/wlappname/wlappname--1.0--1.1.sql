INSERT INTO wlappname_ran SELECT current_setting('port')::int, 'upgrade: ' || current_setting('application_name'), NULL;
