/* flame_svg.c — a summed stack tree as a self-contained interactive SVG,
 * in the manner of flamegraph.pl (written here from scratch): the root at
 * the bottom, callees above their callers, each frame as wide as its
 * weight, children in name order.  Its script needs no network: click a
 * frame to zoom to it (its callers stay below at full width, greyed),
 * "Reset Zoom" or a click on the root to go back, "Search" (or Ctrl+F, or
 * #search=REGEX in the address) to colour matching frames and say what
 * share they hold; the line at the bottom names the frame under the mouse
 * with its weight and share (each frame's <title> is its tooltip too).
 * #zoom=NAME opens zoomed to the first frame of that name.
 *
 * Frames narrower than 0.1 px are not drawn, and at most 65,536 frames are
 * (the widest), so the file stays bounded whatever the incident. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame-local.h"

#define SVG_WIDTH 1200        /* px */
#define SVG_PAD 10            /* px left and right of the frames */
#define FRAME_H 16            /* px per stack level */
#define FONT_PX 12
#define TOP_PX 60             /* title, subtitle, buttons */
#define BOTTOM_PX 34          /* the details line */
#define MIN_WIDTH 0.1         /* px: narrower frames are not drawn */
#define MAX_DRAWN 65536       /* frames */

/* The script: zoom, reset, search, details.  Frames are <g class="f">
 * holding a <title>, a <rect> and a <text>; data-n is the name. */
static const char svg_script[] =
"var W=" "1200" ",P=10,CW=12*0.59,svg,det,unz,mat,frames=[],tot=1;\n"
"function init(){svg=document.documentElement;det=document.getElementById('details');\n"
" unz=document.getElementById('unzoom');mat=document.getElementById('matched');\n"
" var gs=svg.getElementsByClassName('f');for(var i=0;i<gs.length;i++){var g=gs[i],r=g.getElementsByTagName('rect')[0];\n"
"  g.ox=+r.getAttribute('x');g.ow=+r.getAttribute('width');g.oy=+r.getAttribute('y');g.of=r.getAttribute('fill');frames.push(g);}\n"
" svg.addEventListener('click',function(e){var g=frameOf(e);if(g){if(g.oy==maxy())reset();else zoom(g);}},false);\n"
" svg.addEventListener('mouseover',function(e){var g=frameOf(e);if(g)det.textContent=g.getElementsByTagName('title')[0].textContent;},false);\n"
" svg.addEventListener('mouseout',function(e){if(frameOf(e))det.textContent=' ';},false);\n"
" window.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&e.keyCode==70){e.preventDefault();ask();}},false);\n"
" var h=decodeURIComponent((location.hash||'').slice(1));\n"
" if(h.indexOf('zoom=')==0){for(var i=0;i<frames.length;i++)if(frames[i].getAttribute('data-n')==h.slice(5)){zoom(frames[i]);break;}}\n"
" if(h.indexOf('search=')==0)search(h.slice(7));}\n"
"function maxy(){var m=0;for(var i=0;i<frames.length;i++)if(frames[i].oy>m)m=frames[i].oy;return m;}\n"
"function frameOf(e){for(var t=e.target;t&&t!==svg;t=t.parentNode)if(t.getAttribute&&t.getAttribute('class')&&"
"t.getAttribute('class').split(' ').indexOf('f')>=0)return t;return null;}\n"
"function cls(g,c,on){var l=(g.getAttribute('class')||'').split(' ').filter(function(x){return x&&x!=c;});if(on)l.push(c);g.setAttribute('class',l.join(' '));}\n"
"function fit(g){var r=g.getElementsByTagName('rect')[0],t=g.getElementsByTagName('text')[0],w=+r.getAttribute('width')-6,n=g.getAttribute('data-n');\n"
" t.setAttribute('x',+r.getAttribute('x')+3);if(w<2*CW){t.textContent='';return;}var k=Math.floor(w/CW);\n"
" t.textContent=n.length<=k?n:n.slice(0,Math.max(k-2,0))+'..';}\n"
"function place(g,x,w){var r=g.getElementsByTagName('rect')[0];r.setAttribute('x',x);r.setAttribute('width',w);fit(g);}\n"
"function zoom(z){var k=(W-2*P)/z.ow,e=1e-6;for(var i=0;i<frames.length;i++){var g=frames[i];\n"
"  if(g.oy<=z.oy&&g.ox>=z.ox-e&&g.ox+g.ow<=z.ox+z.ow+e){cls(g,'hide',0);cls(g,'parent',0);place(g,P+(g.ox-z.ox)*k,g.ow*k);}\n"
"  else if(g.oy>z.oy&&g.ox<=z.ox+e&&g.ox+g.ow>=z.ox+z.ow-e){cls(g,'hide',0);cls(g,'parent',1);place(g,P,W-2*P);}\n"
"  else cls(g,'hide',1);}\n"
" cls(unz,'hide',0);}\n"
"function reset(){for(var i=0;i<frames.length;i++){var g=frames[i];cls(g,'hide',0);cls(g,'parent',0);place(g,g.ox,g.ow);}cls(unz,'hide',1);}\n"
"function ask(){var s=prompt('Search for (regular expression):','');if(s!==null)search(s);}\n"
"function search(s){var re;try{re=new RegExp(s);}catch(x){return;}var iv=[];\n"
" for(var i=0;i<frames.length;i++){var g=frames[i],r=g.getElementsByTagName('rect')[0];\n"
"  if(s&&re.test(g.getAttribute('data-n'))){r.setAttribute('fill','rgb(230,0,230)');iv.push([g.ox,g.ox+g.ow]);}else r.setAttribute('fill',g.of);}\n"
" iv.sort(function(a,b){return a[0]-b[0];});var sum=0,end=-1;\n"
" for(var i=0;i<iv.length;i++){var a=Math.max(iv[i][0],end);if(iv[i][1]>a)sum+=iv[i][1]-a;if(iv[i][1]>end)end=iv[i][1];}\n"
" mat.textContent=s?'Matched: '+(100*sum/(W-2*P)).toFixed(2)+'%':'';}\n";

/* XML text of @s (names are UTF-8 without control characters: flame.c). */
static void put_xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* The label a frame shows in @w px before the script fits it: the name,
 * or its start and "..", or nothing. */
static void put_fitted(FILE *out, const char *name, double w)
{
	double room = (w - 6) / (FONT_PX * 0.59);
	size_t fits = room > 0 ? (size_t)room : 0, len = strlen(name), n;

	if (fits < 2)
		return;
	if (len <= fits) {
		put_xml(out, name);
		return;
	}
	n = fits - 2;
	while (n && ((unsigned char)name[n] & 0xc0) == 0x80)   /* whole characters */
		n--;
	for (size_t i = 0; i < n; i++) {
		char one[2] = { name[i], '\0' };

		put_xml(out, one);
	}
	fputs("..", out);
}

/* A weight as people read it: a count, or a duration for ns. */
static void weight_text(uint64_t v, const char *unit, char *buf, size_t len)
{
	if (strcmp(unit, "ns") == 0)
		sptd_query_duration_text(v > INT64_MAX ? INT64_MAX : (int64_t)v, buf, len);
	else
		snprintf(buf, len, "%" PRIu64 " %s", v, unit);
}

/* flamegraph.pl's "hot" palette, seeded by the name so a function keeps
 * its colour from one graph to the next. */
static void hot_colour(const char *name, char *buf, size_t len)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	snprintf(buf, len, "rgb(%u,%u,%u)", 205 + h % 50, (h >> 8) % 230, (h >> 16) % 55);
}

/* Red for growth, blue for shrinkage, by @d of the largest change @max. */
static void diff_colour(double d, double max, char *buf, size_t len)
{
	/* from near white (no change) to a saturated colour that black text
	 * still reads on */
	unsigned v = max > 0 ? (unsigned)(90 + 130 * (1 - fmin(fabs(d) / max, 1))) : 220;

	if (d > 0)
		snprintf(buf, len, "rgb(255,%u,%u)", v, v);
	else if (d < 0)
		snprintf(buf, len, "rgb(%u,%u,255)", v, v);
	else
		snprintf(buf, len, "rgb(250,250,250)");
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The least weight a drawn frame has: MIN_WIDTH px, raised so that at most
 * MAX_DRAWN frames are drawn (parents weigh at least their children, so
 * what is drawn stays whole from the root up). */
static int threshold(const struct sptd_query_ftree *t, int side, uint64_t *least)
{
	uint64_t root = t->nodes[0].total[side], *w;
	double px = (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)root;
	size_t n = 0;

	*least = (uint64_t)ceil(MIN_WIDTH / px);
	w = malloc(t->n * sizeof(*w));
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].total[side] >= *least && t->nodes[i].total[side])
			w[n++] = t->nodes[i].total[side];
	if (n > MAX_DRAWN) {
		qsort(w, n, sizeof(*w), cmp_desc);
		*least = w[MAX_DRAWN - 1] + 1;
	}
	if (!*least)
		*least = 1;
	free(w);
	return 0;
}

/* What laying out and drawing carries. */
struct draw {
	const struct sptd_query_ftree *t;
	FILE *out;
	int diff, side;          /* side whose widths are drawn */
	const char *unit;
	uint64_t least;          /* least weight drawn */
	double px;               /* px per unit of weight */
	double scale_a;          /* diff: A's weights in B's units */
	double max_change;       /* diff: largest |change| (share of the total) */
	int levels;              /* stack levels drawn */
	double *x;               /* per node: left edge, px */
	int *level;              /* per node: 0 the root */
};

static void frame_write(struct draw *d, uint32_t i)
{
	const struct sptd_query_ftree_node *n = &d->t->nodes[i];
	const char *name = d->t->names.strs[n->name];
	double w = (double)n->total[d->side] * d->px;
	double y = TOP_PX + (double)(d->levels - 1 - d->level[i]) * FRAME_H;
	char fill[40], a[48], b[48];

	weight_text(n->total[d->side], d->unit, b, sizeof(b));
	fprintf(d->out, "<g class=\"f\" data-n=\"");
	put_xml(d->out, name);
	fprintf(d->out, "\"><title>");
	put_xml(d->out, name);
	if (d->diff) {
		double ta = (double)d->t->nodes[0].total[0], tb = (double)d->t->nodes[0].total[1];
		double pa = ta ? 100.0 * (double)n->total[0] / ta : 0;
		double pb = tb ? 100.0 * (double)n->total[1] / tb : 0;

		weight_text(n->total[0], d->unit, a, sizeof(a));
		fprintf(d->out, " (A %s, %.2f%%; B %s, %.2f%%; %+.2f points)", a, pa, b, pb, pb - pa);
		diff_colour(pb - pa, d->max_change, fill, sizeof(fill));
	} else {
		fprintf(d->out, " (%s, %.2f%%)", b,
		        100.0 * (double)n->total[d->side] / (double)d->t->nodes[0].total[d->side]);
		hot_colour(name, fill, sizeof(fill));
	}
	fprintf(d->out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
	        "fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">", d->x[i], y, w,
	        FRAME_H - 1, fill, d->x[i] + 3, y + FRAME_H - 4.5);
	put_fitted(d->out, name, w);
	fprintf(d->out, "</text></g>\n");
}

/* Lay out the drawn frames (x, level) and count levels; returns frames. */
static int64_t layout(struct draw *d)
{
	const struct sptd_query_ftree *t = d->t;
	int64_t drawn = 0;

	d->x[0] = SVG_PAD;
	d->level[0] = 0;
	d->levels = 1;
	d->max_change = 0;
	/* parents come before children in node order */
	for (size_t i = 0; i < t->n; i++) {
		const struct sptd_query_ftree_node *n = &t->nodes[i];
		double x = d->x[i];

		if (n->total[d->side] < d->least)
			continue;
		drawn++;
		if (d->level[i] + 1 > d->levels)
			d->levels = d->level[i] + 1;
		if (d->diff) {
			double ta = (double)t->nodes[0].total[0], tb = (double)t->nodes[0].total[1];
			double ch = fabs((tb ? (double)n->total[1] / tb : 0) - (ta ? (double)n->total[0] / ta : 0));

			d->max_change = fmax(d->max_change, 100 * ch);
		}
		for (uint32_t c = n->child; c != SPTD_QUERY_FTREE_NONE; c = t->nodes[c].sibling) {
			d->x[c] = x;
			d->level[c] = d->level[i] + 1;
			x += (double)t->nodes[c].total[d->side] * d->px;
		}
	}
	return drawn;
}

int sptd_query_flame_svg(const struct sptd_query_ftree *t, int diff, const char *title,
                         const char *subtitle, const char *unit, FILE *out)
{
	struct draw d = { .t = t, .out = out, .diff = diff, .side = diff ? 1 : 0, .unit = unit };
	int64_t drawn;
	int height, rc;

	if (!t->nodes[0].total[d.side])
		return -EINVAL;
	rc = threshold(t, d.side, &d.least);
	if (rc < 0)
		return rc;
	d.px = (double)(SVG_WIDTH - 2 * SVG_PAD) / (double)t->nodes[0].total[d.side];
	d.x = malloc(t->n * sizeof(*d.x));
	d.level = calloc(t->n, sizeof(*d.level));
	if (!d.x || !d.level) {
		free(d.x);
		free(d.level);
		return -ENOMEM;
	}
	drawn = layout(&d);
	height = TOP_PX + d.levels * FRAME_H + BOTTOM_PX;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
	        "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	        "onload=\"init(evt)\" xmlns=\"http://www.w3.org/2000/svg\">\n"
	        "<style type=\"text/css\">text{font-family:Verdana,sans-serif;font-size:%dpx;fill:#000}"
	        " .f text{pointer-events:none} .f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}"
	        " .hide{display:none} .parent{opacity:0.5} .btn{cursor:pointer;fill:#333}"
	        " #title{font-size:17px;text-anchor:middle} #sub{fill:#555;text-anchor:middle}</style>\n"
	        "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n"
	        "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#f8f8f0\"/>\n"
	        "<text id=\"title\" x=\"%d\" y=\"24\">", SVG_WIDTH, height, SVG_WIDTH, height,
	        FONT_PX, svg_script, SVG_WIDTH, height, SVG_WIDTH / 2);
	put_xml(out, title);
	fprintf(out, "</text>\n<text id=\"sub\" x=\"%d\" y=\"42\">", SVG_WIDTH / 2);
	put_xml(out, subtitle);
	fprintf(out, "</text>\n<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"24\" "
	        "onclick=\"reset()\">Reset Zoom</text>\n"
	        "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\" onclick=\"ask()\">Search</text>\n"
	        "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n"
	        "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
	        SVG_PAD, SVG_WIDTH - SVG_PAD - 50, SVG_WIDTH - SVG_PAD - 120, height - 12,
	        SVG_PAD, height - 12);
	for (size_t i = 0; i < t->n; i++)
		if (t->nodes[i].total[d.side] >= d.least)
			frame_write(&d, (uint32_t)i);
	fprintf(out, "</svg>\n");
	free(d.x);
	free(d.level);
	return ferror(out) ? -EIO : drawn > INT32_MAX ? INT32_MAX : (int)drawn;
}
