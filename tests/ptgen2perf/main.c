/* main.c — sptd-ptgen2perf: an sptd-ptgen output directory as perf.data.
 *
 *   sptd-ptgen2perf [--wrap-all] [--images DIR] [--switch-slack NS] GENDIR OUT.perf.data
 *
 * Images whose bytes are their original file's are named by that file;
 * the others (the vdso; every one with --wrap-all) become wrapper ELFs in
 * --images DIR (default OUT.perf.data.images).  Exit 0 ok, 1 error,
 * 2 usage. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "p2p.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sptd-ptgen2perf [--wrap-all] [--images DIR] [--switch-slack NS] GENDIR OUT.perf.data\n"
	        "Write the perf.data that perf record -e intel_pt//u --switch-events -a would\n"
	        "have written for an sptd-ptgen run (docs/PTGEN.md).\n"
	        "  --wrap-all    wrap every image in an ELF, even those equal to their file\n"
	        "  --images DIR  where wrapper ELFs go (default OUT.perf.data.images)\n"
	        "  --switch-slack NS  switch records this far inside the idle gap, after the\n"
	        "                TIP.PGD / before the TIP.PGE (default a quarter of the gap;\n"
	        "                0: at the generator's times exactly)\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "wrap-all", no_argument, NULL, 'w' },
		{ "images", required_argument, NULL, 'i' },
		{ "switch-slack", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sptd_p2p_input in = { 0 };
	char err[1024] = "", wrapdir[PATH_MAX];
	const char *images = NULL;
	int c, wrap_all = 0, ret;
	long long slack = -1;
	char *end;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'w': wrap_all = 1; break;
		case 'i': images = optarg; break;
		case 's':
			slack = strtoll(optarg, &end, 10);
			if (end == optarg || *end || slack < 0) {
				fprintf(stderr, "sptd-ptgen2perf: bad --switch-slack '%s': want ns >= 0\n",
				        optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	if (images)
		snprintf(wrapdir, sizeof(wrapdir), "%s", images);
	else
		snprintf(wrapdir, sizeof(wrapdir), "%.4000s.images", argv[optind + 1]);
	ret = sptd_p2p_input_read(argv[optind], &in, err, sizeof(err));
	if (ret == 0 && slack >= 0)
		in.switch_slack_ns = slack;
	if (ret == 0)
		ret = sptd_p2p_images_prepare(&in, wrapdir, wrap_all, err, sizeof(err));
	if (ret == 0)
		ret = sptd_p2p_perf_write(&in, argv[optind + 1], err, sizeof(err));
	sptd_p2p_input_fini(&in);
	if (ret < 0) {
		fprintf(stderr, "sptd-ptgen2perf: %s\n", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}
