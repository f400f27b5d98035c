/*
 * exitscope flame: a flame graph of one window's profile, or a
 * differential flame graph between two.
 *
 *   exitscope flame [OPTIONS] FILE.data
 *   exitscope flame [OPTIONS] --diff BASE.data NEW.data
 *
 * Input files are perf.data files (exitscope's or perf record's), read
 * through `perf script` so that symbols and call chains (frame pointers
 * or DWARF) are perf's own, or folded stacks ("f1 [lib];f2 [lib] COUNT"),
 * such as --folded prints. The SVG is self-contained: hover shows a
 * frame's samples and share, a click zooms, "Search" (or Ctrl-F)
 * highlights matching frames and prints their total share.
 *
 * A diff is sized by NEW and coloured by how each frame's share of its
 * side's samples changed from BASE (red: larger, blue: smaller), so
 * windows of different lengths compare fairly.
 *
 * --folded prints folded stacks instead ("STACK COUNT", or "STACK BASE NEW"
 * for a diff); --frames prints one line per frame with its inclusive and
 * self samples, or for a diff "PATH BASE NEW BASE% NEW% CHANGE" (tab
 * separated, percentages and points with 4 decimals). Both are sorted
 * depth first in name order, a stable format (tests/golden/flame-*).
 *
 * Exit status: 0; 2 for a usage error; 1 when an input cannot be read
 * (the message names the file and the position) or the output cannot be
 * written (a partial file is removed).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "cli/cli.h"
#include "cli/flamesvg.h"
#include "cli/fold.h"
#include "cli/records.h"

static const char g_flame_usage[] =
	"usage: exitscope flame [OPTIONS] FILE.data\n"
	"       exitscope flame [OPTIONS] --diff BASE.data NEW.data\n"
	"  -o, --output FILE   where the SVG goes ('-': standard output; default: the\n"
	"                      input with .svg for .data, or NEW.diff.svg for --diff)\n"
	"  -t, --per-thread    one tower per thread name\n"
	"      --title TEXT    the graph's title\n"
	"      --width PX      width in pixels (default 1200)\n"
	"      --folded        print folded stacks instead of an SVG\n"
	"      --frames        print each frame's samples (and change) instead\n"
	"  -h, --help          this text\n"
	"Inputs are perf.data files, read with 'perf script' ($PERF overrides the\n"
	"program), or folded stacks.\n";

enum { OPT_TITLE = 256, OPT_WIDTH, OPT_FOLDED, OPT_FRAMES, OPT_DIFF };

/* FILE.data -> FILE.svg (FILE.diff.svg for a diff); malloc'd. */
static char *default_output(const char *input, bool diff)
{
	size_t n = strlen(input);
	if (n > 5 && !strcmp(input + n - 5, ".data"))
		n -= 5;
	const char *ext = diff ? ".diff.svg" : ".svg";
	char *out = malloc(n + strlen(ext) + 1);
	if (out) {
		memcpy(out, input, n);
		strcpy(out + n, ext);
	}
	return out;
}

static int flame_load(struct xs_fold *f, int side, const char *path)
{
	int err = xs_fold_read_file(f, side, path);
	if (err < 0)
		xs_error("cannot read '%s': %s", path, f->msg);
	return err;
}

int cmd_flame(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "per-thread", no_argument, NULL, 't' },
		{ "title", required_argument, NULL, OPT_TITLE },
		{ "width", required_argument, NULL, OPT_WIDTH },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "frames", no_argument, NULL, OPT_FRAMES },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *output = NULL, *title = NULL;
	bool per_thread = false, folded = false, frames = false, diff = false;
	unsigned long width = 1200;
	int opt;
	char *end;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "o:th", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o': output = optarg; break;
		case 't': per_thread = true; break;
		case OPT_TITLE: title = optarg; break;
		case OPT_FOLDED: folded = true; break;
		case OPT_FRAMES: frames = true; break;
		case OPT_DIFF: diff = true; break;
		case OPT_WIDTH:
			width = strtoul(optarg, &end, 10);
			if (*end || width < 200 || width > 100000) {
				xs_error("flame: --width wants pixels from 200 to 100000, not '%s'", optarg);
				return XS_EXIT_USAGE;
			}
			break;
		case 'h':
			fputs(g_flame_usage, stdout);
			return xs_cli_finish_stdout();
		default:
			return xs_bad_option("flame", argv, "o:th", longopts);
		}
	}
	if (argc - optind != (diff ? 2 : 1)) {
		xs_error(diff ? "flame --diff needs two profiles, BASE and NEW; see 'exitscope flame --help'"
			      : "flame needs one profile file; see 'exitscope flame --help'");
		return XS_EXIT_USAGE;
	}
	if (folded && frames) {
		xs_error("flame: --folded and --frames exclude each other");
		return XS_EXIT_USAGE;
	}
	struct xs_fold f;
	struct xs_buf out = { .grow = xs_cli_buf_grow };
	char *made = NULL;
	int status = XS_EXIT_DATA;
	if (xs_fold_init(&f, per_thread) < 0) {
		xs_error("out of memory");
		return XS_EXIT_DATA;
	}
	if (flame_load(&f, 0, argv[optind]) < 0 || (diff && flame_load(&f, 1, argv[optind + 1]) < 0))
		goto out_release;
	xs_fold_sort(&f);
	if (folded) {
		xs_fold_print_folded(&out, &f, diff);
	} else if (frames) {
		xs_fold_print_frames(&out, &f, diff);
	} else {
		char heading[512];
		if (!title) {
			if (diff)
				snprintf(heading, sizeof(heading), "%s vs %s", argv[optind + 1], argv[optind]);
			else
				snprintf(heading, sizeof(heading), "%s", argv[optind]);
			title = heading;
		}
		struct xs_flame_style style = { .title = title, .diff = diff, .standalone = true,
						.width = (unsigned)width };
		xs_flame_svg(&out, &f, &style);
	}
	if (!output && (folded || frames))
		output = "-";
	if (!output && !(output = made = default_output(argv[optind + (diff ? 1 : 0)], diff))) {
		xs_error("out of memory");
		goto out_release;
	}
	status = xs_cli_write_output(output, &out);
	if (status == XS_EXIT_OK && strcmp(output, "-"))
		fprintf(stderr, "exitscope: wrote '%s' (%llu samples)\n", output,
			(unsigned long long)f.nodes[0].total[diff ? 1 : 0]);
out_release:
	free(made);
	xs_cli_buf_release(&out);
	xs_fold_release(&f);
	return status;
}
