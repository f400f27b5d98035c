/*
 * Drawing a folded call tree (fold.h) as a flame graph in SVG: frames sized
 * by their samples, the outermost at the bottom, children in name order.
 * A standalone graph carries its own style and script (zoom on click,
 * search, details on hover; src/cli/assets/flame.js); an embedded one
 * relies on the page including them once (xs_flame_assets()).
 */
#ifndef XS_CLI_FLAMESVG_H
#define XS_CLI_FLAMESVG_H

#include <stdbool.h>
#include "cli/fold.h"
#include "common/buf.h"

struct xs_flame_style {
	const char *title;
	const char *subtitle;		/* NULL: a summary of the samples */
	bool diff;			/* size by side 1 (NEW), colour by the change from side 0 */
	bool standalone;		/* an .svg file: XML declaration, style and script inside */
	unsigned width;			/* pixels; 0 means 1200 */
};

/* Append the flame graph of a sorted tree to out. */
void xs_flame_svg(struct xs_buf *out, const struct xs_fold *f, const struct xs_flame_style *style);

/* Append the flame graphs' <style> and <script> elements, for a page that
 * embeds graphs made with standalone = false. */
void xs_flame_assets(struct xs_buf *out);

/* Append s with XML's special characters escaped (and control bytes as '?'). */
void xs_xml_text(struct xs_buf *out, const char *s);

#endif
