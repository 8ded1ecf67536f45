/* print_sql.c: prints the SQL text of one plan of store_sql.c (argument: the plan number). */
#include "postgres.h"
#include "store_sql.h"
#undef fputs
#undef printf
int main(int argc, char **argv);
int
main(int argc, char **argv)
{
	int id = atoi(argv[1]);
	fputs(wl_plan_defs[id].sql, stdout); fputs("\n", stdout);
	return 0;
}
