/* main.c — the sysptd entry point: picks the subcommand; everything else
 * lives in the sptd_col library so tests run the same code. */
#include <stdio.h>
#include <string.h>

#include "sptd_col.h"

int main(int argc, char **argv);

int main(int argc, char **argv)
{
	return sptd_col_main(argc, argv);
}
