/* SPDX-License-Identifier: GPL-2.0 */
/* report_assets.h: the report page's template, styles and script (cmd/output/report/), embedded at build time. */
#ifndef __REPORT_ASSETS_H
#define __REPORT_ASSETS_H

#include <stddef.h>

extern const unsigned char report_html[], report_css[], report_js[];
extern const size_t report_html_len, report_css_len, report_js_len;
/* "'sha256-...'": the Content-Security-Policy sources that allow exactly these styles and script */
extern const char report_css_csp[], report_js_csp[];

#endif /* __REPORT_ASSETS_H */
