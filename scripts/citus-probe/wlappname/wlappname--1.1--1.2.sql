UPDATE public.probe_counter SET n = n + 1 WHERE k = 'a';
