/*
 * Flame graphs as SVG (see flamesvg.h). The layout is computed here, once,
 * in pixels; the script only rescales on zoom, from each frame's position
 * in samples (data-o, data-n) and depth (data-d).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli/flamesvg.h"
#include "cli/records.h"
#include "assets.h"

enum {
	FRAME_H = 17,		/* px per stack level */
	PAD = 10,
	TOP = 54,		/* title, subtitle and the controls */
	BOTTOM = 26,		/* the details line */
};
#define MIN_WIDTH_PX 0.1	/* narrower frames (and so their children) are left out */
#define CHAR_W 7.2		/* px per character of a 12px monospace label (as in flame.js) */

void xs_xml_text(struct xs_buf *out, const char *s)
{
	while (*s) {
		uint32_t cp;
		size_t n = xs_utf8_char(s, &cp);
		/* XML 1.0 allows no C0 control but tab and newlines, no U+FFFE/U+FFFF
		 * and only well-formed UTF-8: one bad byte would make the whole
		 * SVG unreadable; C1 controls are allowed but are no text either */
		if (!n || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0xfffe || cp == 0xffff) {
			xs_buf_addc(out, '?');
			s += n ? n : 1;
			continue;
		}
		switch (cp) {
		case '<': xs_buf_add(out, "&lt;"); break;
		case '>': xs_buf_add(out, "&gt;"); break;
		case '&': xs_buf_add(out, "&amp;"); break;
		case '"': xs_buf_add(out, "&quot;"); break;
		case '\'': xs_buf_add(out, "&#39;"); break;
		default: xs_buf_addn(out, s, n);
		}
		s += n;
	}
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Warm colours: the library picks the red/blue cast, the function the green. */
static void frame_colour(char *out, size_t size, const struct xs_fold_frame *fr)
{
	if (fr->thread) {
		snprintf(out, size, "rgb(170,190,215)");
		return;
	}
	if (!strcmp(fr->name, "[unknown]")) {
		snprintf(out, size, "rgb(200,200,200)");
		return;
	}
	double lib = (hash_str(fr->dso) % 1000) / 1000.0, fn = (hash_str(fr->name) % 1000) / 1000.0;
	snprintf(out, size, "rgb(%d,%d,%d)", 205 + (int)(50 * lib), 60 + (int)(170 * fn), 20 + (int)(50 * lib));
}

/* White for no change, red for a larger share in NEW, blue for a smaller one. */
static void diff_colour(char *out, size_t size, double delta_pp, double max_abs)
{
	double s = max_abs > 0 ? fabs(delta_pp) / max_abs : 0;
	int fade = 255 - (int)lround(200 * s);
	if (delta_pp > 0)
		snprintf(out, size, "rgb(255,%d,%d)", fade, fade);
	else if (delta_pp < 0)
		snprintf(out, size, "rgb(%d,%d,255)", fade, fade);
	else
		snprintf(out, size, "rgb(250,250,250)");
}

struct layout {
	const struct xs_fold *f;
	int side;
	double px_per_sample;
	uint64_t *offset;		/* per node: first sample, in child order */
	uint32_t max_depth;
	double max_abs_delta;		/* diff: largest change of a drawn frame, in points */
	uint64_t gone_frames, gone_samples;	/* diff: topmost frames only in BASE */
};

static bool drawn(const struct layout *l, uint32_t node)
{
	return (double)l->f->nodes[node].total[l->side] * l->px_per_sample >= MIN_WIDTH_PX;
}

static double delta_pp(const struct xs_fold *f, uint32_t node)
{
	return (xs_fold_share(f, node, 1) - xs_fold_share(f, node, 0)) / 1e4;
}

/* Offsets, depth and colour scale of the drawn frames; false when out of memory. */
static bool lay_out(struct layout *l)
{
	const struct xs_fold *f = l->f;
	l->offset = calloc(f->node_count, sizeof(*l->offset));
	if (!l->offset)
		return false;
	for (size_t i = 0; i < f->node_count; i++) {
		const struct xs_fold_node *n = &f->nodes[i];
		uint64_t at = l->offset[i];
		for (uint32_t c = n->first_child; c; c = f->nodes[c].next_sibling) {
			l->offset[c] = at;	/* children come after their parent in node order */
			at += f->nodes[c].total[l->side];
		}
		if (i && !n->total[l->side] && n->total[0] && f->nodes[n->parent].total[l->side]) {
			l->gone_frames++;
			l->gone_samples += n->total[0];
		}
		if (!drawn(l, (uint32_t)i))
			continue;
		if (n->depth > l->max_depth)
			l->max_depth = n->depth;
		if (i && fabs(delta_pp(f, (uint32_t)i)) > l->max_abs_delta)
			l->max_abs_delta = fabs(delta_pp(f, (uint32_t)i));
	}
	return true;
}

/* The frame's tooltip, as plain text (the caller escapes it). */
static void frame_title(struct xs_buf *out, const struct layout *l, uint32_t node)
{
	const struct xs_fold *f = l->f;
	const struct xs_fold_node *n = &f->nodes[node];
	if (node)
		xs_fold_frame_text(out, f, n->frame);
	else
		xs_buf_add(out, "all");
	if (l->side == 0) {
		xs_cli_addf(out, " \xe2\x80\x94 %llu samples, %.2f%%", (unsigned long long)n->total[0],
		     xs_fold_share(f, node, 0) / 1e4);
		if (node && n->self[0])
			xs_cli_addf(out, " (self %llu)", (unsigned long long)n->self[0]);
		return;
	}
	xs_cli_addf(out, " \xe2\x80\x94 NEW %llu samples (%.2f%%), BASE %llu (%.2f%%), change %+.2f points",
	     (unsigned long long)n->total[1], xs_fold_share(f, node, 1) / 1e4, (unsigned long long)n->total[0],
	     xs_fold_share(f, node, 0) / 1e4, delta_pp(f, node));
}

/* How many of the len bytes at s to keep, at most n, so that no UTF-8
 * character is cut in two. (Only bytes below len are looked at.) */
static size_t cut_utf8(const char *s, size_t len, size_t n)
{
	if (n >= len)
		return len;
	size_t k = n;
	while (k && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	return ((unsigned char)s[n] & 0xc0) == 0x80 ? k : n;
}

/* The frame's folded text ("all" for the root), cut at size. */
static void plain_label(char *text, size_t size, const struct xs_fold *f, uint32_t node)
{
	struct xs_buf b = { .grow = xs_cli_buf_grow };	/* a long C++ name is cut, not lost */
	if (node)
		xs_fold_frame_text(&b, f, f->nodes[node].frame);
	else
		xs_buf_add(&b, "all");
	size_t n = b.failed || !b.data ? 0 : cut_utf8(b.data, b.len, size - 1);
	memcpy(text, b.data, n);
	text[n] = 0;
	xs_cli_buf_release(&b);
}

/* The label cut to fit width px, as flame.js does it. */
static void fitted_label(struct xs_buf *out, const char *label, double width)
{
	int fit = (int)floor((width - 6) / CHAR_W);
	if (fit < 3)
		return;
	if (strlen(label) <= (size_t)fit) {
		xs_xml_text(out, label);
		return;
	}
	char cut[1024];
	size_t n = cut_utf8(label, strlen(label), (size_t)fit - 2 < sizeof(cut) - 1 ? (size_t)fit - 2 : sizeof(cut) - 1);
	memcpy(cut, label, n);
	cut[n] = 0;
	xs_xml_text(out, cut);
	xs_buf_add(out, "..");
}

static void draw_frame(struct xs_buf *out, const struct layout *l, uint32_t node)
{
	char label[1024];
	plain_label(label, sizeof(label), l->f, node);
	const struct xs_fold *f = l->f;
	const struct xs_fold_node *n = &f->nodes[node];
	double x = PAD + (double)l->offset[node] * l->px_per_sample, w = (double)n->total[l->side] * l->px_per_sample;
	int y = TOP + (int)(l->max_depth - n->depth) * FRAME_H;
	char colour[64];
	if (l->side == 1)
		diff_colour(colour, sizeof(colour), node ? delta_pp(f, node) : 0, l->max_abs_delta);
	else if (node)
		frame_colour(colour, sizeof(colour), &f->frames[n->frame]);
	else
		snprintf(colour, sizeof(colour), "rgb(225,215,200)");
	xs_cli_addf(out, "<g class=\"fr\" data-o=\"%llu\" data-n=\"%llu\" data-d=\"%u\" data-l=\"",
	     (unsigned long long)l->offset[node], (unsigned long long)n->total[l->side], n->depth);
	xs_xml_text(out, label);
	xs_buf_add(out, "\"><title>");
	struct xs_buf tip = { .grow = xs_cli_buf_grow };
	frame_title(&tip, l, node);
	xs_buf_addc(&tip, 0);
	if (tip.failed)
		out->failed = true;
	else
		xs_xml_text(out, tip.data);
	xs_cli_buf_release(&tip);
	xs_cli_addf(out, "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\"/>"
		  "<text x=\"%.1f\" y=\"%d\">",
	     x, y, w < 0.1 ? 0.1 : w, FRAME_H - 1, colour, x + 3, y + FRAME_H - 5);
	fitted_label(out, label, w);
	xs_buf_add(out, "</text></g>\n");
}

void xs_flame_assets(struct xs_buf *out)
{
	xs_buf_add(out, "<style>\n");
	xs_buf_add(out, g_asset_flame_css);
	xs_buf_add(out, "</style>\n<script>\n");
	xs_buf_add(out, g_asset_flame_js);
	xs_buf_add(out, "</script>\n");
}

void xs_flame_svg(struct xs_buf *out, const struct xs_fold *f, const struct xs_flame_style *style)
{
	unsigned width = style->width ? style->width : 1200;
	struct layout l = { .f = f, .side = style->diff ? 1 : 0 };
	uint64_t total = f->nodes[0].total[l.side];
	l.px_per_sample = total ? (double)(width - 2 * PAD) / (double)total : 0;
	if (!lay_out(&l)) {
		out->failed = true;
		return;
	}
	int height = TOP + (int)(l.max_depth + 1) * FRAME_H + BOTTOM;
	if (style->standalone)
		xs_buf_add(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	xs_cli_addf(out,
	     "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"xs-flame\" width=\"%u\" height=\"%d\" "
	     "viewBox=\"0 0 %u %d\" data-width=\"%u\" data-pad=\"%d\" data-total=\"%llu\" data-mode=\"%s\">\n",
	     width, height, width, height, width, PAD, (unsigned long long)total, style->diff ? "diff" : "single");
	if (style->standalone) {
		xs_buf_add(out, "<style><![CDATA[\n");
		xs_buf_add(out, g_asset_flame_css);
		xs_buf_add(out, "]]></style>\n");
	}
	xs_cli_addf(out, "<rect class=\"bg\" x=\"0\" y=\"0\" width=\"%u\" height=\"%d\"/>\n", width, height);
	xs_cli_addf(out, "<text class=\"title\" x=\"%u\" y=\"22\" text-anchor=\"middle\">", width / 2);
	xs_xml_text(out, style->title ? style->title : "Flame graph");
	xs_cli_addf(out, "</text>\n<text class=\"subtitle\" x=\"%u\" y=\"40\" text-anchor=\"middle\">", width / 2);
	if (style->subtitle) {
		xs_xml_text(out, style->subtitle);
	} else if (style->diff) {
		xs_cli_addf(out, "NEW %llu samples, BASE %llu; width: NEW, colour: change in share (red more, blue less)",
		     (unsigned long long)f->nodes[0].total[1], (unsigned long long)f->nodes[0].total[0]);
	} else {
		xs_cli_addf(out, "%llu samples", (unsigned long long)total);
	}
	if (style->diff && l.gone_frames)
		xs_cli_addf(out, "; %llu frames only in BASE (%.2f%% of its samples)", (unsigned long long)l.gone_frames,
		     f->nodes[0].total[0] ? 100.0 * (double)l.gone_samples / (double)f->nodes[0].total[0] : 0);
	if (f->truncated_stacks)
		xs_cli_addf(out, "; %llu stacks cut at %d frames", (unsigned long long)f->truncated_stacks, XS_FOLD_MAX_DEPTH);
	xs_buf_add(out, "</text>\n");
	xs_cli_addf(out, "<text class=\"reset\" x=\"%d\" y=\"22\" style=\"display:none\">Reset zoom</text>\n", PAD);
	if (style->standalone) {
		/* an embedded graph has its page's search box instead: one control */
		xs_cli_addf(out, "<text class=\"search\" x=\"%u\" y=\"22\" text-anchor=\"end\">Search</text>\n",
			    width - PAD);
		xs_cli_addf(out, "<text class=\"matched\" x=\"%u\" y=\"%d\" text-anchor=\"end\"> </text>\n",
			    width - PAD, height - 9);
	}
	xs_cli_addf(out, "<text class=\"details\" x=\"%d\" y=\"%d\"> </text>\n<g class=\"frames\">\n", PAD, height - 9);
	if (total)
		for (size_t i = 0; i < f->node_count; i++)
			if (drawn(&l, (uint32_t)i))
				draw_frame(out, &l, (uint32_t)i);
	xs_buf_add(out, "</g>\n");
	if (style->standalone) {
		xs_buf_add(out, "<script type=\"text/ecmascript\"><![CDATA[\n");
		xs_buf_add(out, g_asset_flame_js);
		xs_buf_add(out, "]]></script>\n");
	}
	xs_buf_add(out, "</svg>\n");
	free(l.offset);
}
