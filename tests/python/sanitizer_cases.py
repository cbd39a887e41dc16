"""Inputs for the sanitizer suite of feature status messages (docs/features.md, "Title and body
sanitizing"; test_feature_message_sanitizer.py and tests/browser/sanitizer-xss.mjs use them).

Written for Basin from the known classes of filter evasion, not copied from any list:

- `HOSTILE`: (class, input) pairs. None of them may leave anything executable in a stored body
  or any markup in a stored title. Many are generated from templates: a dangerous URL (scheme x
  encoding x whitespace and control characters) in every place a browser follows one, every
  event handler on every allowed tag, and the elements whose content must disappear with them.
  Every payload that would run calls `alert`, `confirm`, `prompt`, `print` or `__xss`, the
  canaries of the browser check.
- `BENIGN`: (input, exact stored body): allowed markup survives, in the sanitizer's canonical
  serialization.

A NUL character anywhere in a request body is refused (400 `validation`, as everywhere in
Basin); the test posts each input that holds one twice: as it is (refused) and without its NULs
(sanitized like the rest).
- `BENIGN_TITLES`: (input, exact stored title).
- `DROPPED_WITH_CONTENT`: elements whose text must not survive (the marker must be gone).
"""

import base64

ALERT = "alert(1)"


def _dec(text, width=0, semicolon=True):
    end = ";" if semicolon else ""
    return "".join(f"&#{ord(c):0{width}d}{end}" for c in text)


def _hex(text, width=0, upper=False, semicolon=True):
    x = "X" if upper else "x"
    end = ";" if semicolon else ""
    return "".join(f"&#{x}{ord(c):0{width}x}{end}" for c in text)


def _mixed(text):
    return "".join(c.upper() if i % 2 == 0 else c.lower() for i, c in enumerate(text))


def _insert(word, piece, at=4):
    return word[:at] + piece + word[at:]


# Ways to write "<scheme>:" so that a browser still reads <scheme> as the scheme (or, for a few,
# so that it reads a relative URL, which Basin must drop too). Each takes the scheme and returns
# the text before the payload.
SCHEME_ENCODINGS = {
    "plain": lambda s: s + ":",
    "upper": lambda s: s.upper() + ":",
    "mixed-case": lambda s: _mixed(s) + ":",
    "decimal-entities": lambda s: _dec(s + ":"),
    "decimal-no-semicolon": lambda s: _dec(s + ":", semicolon=False),
    "decimal-zero-padded": lambda s: _dec(s + ":", width=7),
    "hex-entities": lambda s: _hex(s + ":"),
    "hex-upper-x": lambda s: _hex(s + ":", upper=True),
    "hex-no-semicolon": lambda s: _hex(s + ":", semicolon=False),
    "hex-zero-padded": lambda s: _hex(s + ":", width=8),
    "named-colon": lambda s: s + "&colon;",
    "decimal-colon": lambda s: s + "&#58;",
    "hex-colon-no-semicolon": lambda s: s + "&#x3A",
    "tab-inside": lambda s: _insert(s, "\t") + ":",
    "tab-entity-inside": lambda s: _insert(s, "&Tab;") + ":",
    "tab-decimal-inside": lambda s: _insert(s, "&#9;") + ":",
    "lf-inside": lambda s: _insert(s, "\n") + ":",
    "lf-named-inside": lambda s: _insert(s, "&NewLine;") + ":",
    "lf-hex-inside": lambda s: _insert(s, "&#x0A;") + ":",
    "cr-inside": lambda s: _insert(s, "\r") + ":",
    "cr-decimal-inside": lambda s: _insert(s, "&#13;") + ":",
    "several-breaks-inside": lambda s: _insert(_insert(s, "\t\n", 2), "\r", 6) + ":",
    "nul-inside": lambda s: _insert(s, "\x00") + ":",
    "nul-entity-inside": lambda s: _insert(s, "&#0;") + ":",
    "leading-space": lambda s: " " + s + ":",
    "leading-spaces-and-breaks": lambda s: " \t\n " + s + ":",
    "leading-c0-raw": lambda s: "\x01\x02\x1f" + s + ":",
    "leading-c0-entity": lambda s: "&#1;&#x1f;" + s + ":",
    "leading-form-feed": lambda s: "\x0c" + s + ":",
    "leading-form-feed-entity": lambda s: "&#12;" + s + ":",
    "leading-vertical-tab": lambda s: "\x0b" + s + ":",
    "leading-nbsp": lambda s: "&nbsp;" + s + ":",
    "half-encoded": lambda s: _hex(s[:1]) + s[1:3] + _dec(s[3:4]) + s[4:] + "&#x3a;",
    "percent-encoded-colon": lambda s: s + "%3A",
    "zero-width-inside": lambda s: _insert(s, "\u200b") + ":",
}

# The schemes that run code in a browser and what follows their colon. The script starts with
# a letter that is no hex digit, so that a hex reference without `;` just before it (`&#x3a`)
# ends where the colon does.
SCHEMES = {
    "javascript": "prompt(1)",
    "vbscript": "msgbox(1)",
    "data": "text/html,<script>alert(1)</script>",
}

# The encodings tried with every scheme; javascript gets all of them.
SHORT_ENCODINGS = (
    "plain", "upper", "mixed-case", "decimal-entities", "hex-no-semicolon", "named-colon",
    "tab-inside", "lf-named-inside", "nul-inside", "leading-c0-raw", "leading-c0-entity",
    "leading-space",
)


def _html_attr(value):
    return value.replace('"', "&quot;")


def _scheme_cases():
    cases = []
    for scheme, rest in SCHEMES.items():
        names = SCHEME_ENCODINGS if scheme == "javascript" else SHORT_ENCODINGS
        for name in names:
            url = SCHEME_ENCODINGS[name](scheme) + rest
            cases.append((f"scheme-{scheme}-{name}", f'<a href="{_html_attr(url)}">link</a>'))
    # The same with other quoting of the attribute.
    cases += [
        ("scheme-unquoted", "<a href=javascript:alert(1)>link</a>"),
        ("scheme-single-quoted", "<a href='javascript:alert(1)'>link</a>"),
        ("scheme-backtick", "<a href=`javascript:alert(1)`>link</a>"),
        ("scheme-unquoted-entities", "<a href=&#106;avascript&#58;alert(1)>link</a>"),
        ("scheme-two-hrefs", '<a href="javascript:alert(1)" href="https://example.com/">x</a>'),
        ("scheme-https-then-js", '<a href="https://example.com/" href="javascript:alert(1)">x</a>'),
        ("scheme-js-comment-newline", '<a href="javascript://example.com/%0Aalert(1)">x</a>'),
        ("scheme-js-https-lookalike", '<a href="javascript://https://example.com/%0Aalert(1)">x</a>'),
        ("scheme-data-base64", '<a href="data:text/html;base64,'
         + base64.b64encode(b"<script>alert(1)</script>").decode() + '">x</a>'),
        ("scheme-data-svg", '<a href="data:image/svg+xml,<svg onload=alert(1)>">x</a>'),
        ("scheme-data-uppercase", '<a href="DATA:text/html,<script>alert(1)</script>">x</a>'),
        ("scheme-data-no-type", '<a href="data:,alert(1)">x</a>'),
        ("scheme-vbscript-upper-payload", '<a href="VBScript:MsgBox(1)">x</a>'),
        ("scheme-livescript", '<a href="livescript:alert(1)">x</a>'),
        ("scheme-http", '<a href="http://example.com/">x</a>'),
        ("scheme-ftp", '<a href="ftp://example.com/">x</a>'),
        ("scheme-file", '<a href="file:///etc/passwd">x</a>'),
        ("scheme-blob", '<a href="blob:https://example.com/0000">x</a>'),
        ("scheme-about", '<a href="about:blank">x</a>'),
        ("scheme-view-source", '<a href="view-source:https://example.com/">x</a>'),
        ("scheme-relative-path", '<a href="/api/admin/features">x</a>'),
        ("scheme-protocol-relative", '<a href="//example.com/">x</a>'),
        ("scheme-backslashes", '<a href="\\\\example.com\\x">x</a>'),
        ("scheme-query-only", '<a href="?a=1">x</a>'),
        ("scheme-fragment-only", '<a href="#top">x</a>'),
        ("scheme-empty", '<a href="">x</a>'),
        ("scheme-https-no-slashes-js", '<a href="https:javascript:alert(1)">x</a>'),
        ("scheme-mailto-then-js", '<a href="mailto:javascript:alert(1)">x</a>'),
        ("scheme-fullwidth-colon", '<a href="javascript\uff1aalert(1)">x</a>'),
        ("scheme-space-before-colon", '<a href="javascript :alert(1)">x</a>'),
    ]
    return cases


# Where a browser follows or loads a URL, with `{}` for the URL.
URL_SINKS = {
    "img-src": '<img src="{}">',
    "iframe-src": '<iframe src="{}"></iframe>',
    "frame-src": '<frameset><frame src="{}"></frameset>',
    "form-action": '<form action="{}"><button>go</button></form>',
    "button-formaction": '<button formaction="{}">go</button>',
    "input-formaction": '<input type="submit" formaction="{}">',
    "object-data": '<object data="{}"></object>',
    "embed-src": '<embed src="{}">',
    "base-href": '<base href="{}"><a href="x">x</a>',
    "link-href": '<link rel="stylesheet" href="{}">',
    "area-href": '<map name="m"><area shape="rect" coords="0,0,9,9" href="{}"></map>',
    "meta-refresh": '<meta http-equiv="refresh" content="0;url={}">',
    "svg-a-xlink": '<svg><a xlink:href="{}"><text x="0" y="9">x</text></a></svg>',
    "svg-a-href": '<svg><a href="{}"><rect width="9" height="9"/></a></svg>',
    "math-href": '<math><mi href="{}">x</mi></math>',
    "table-background": '<table background="{}"><tr><td>x</td></tr></table>',
    "b-with-href": '<b href="{}">x</b>',
    "p-with-src": '<p src="{}">x</p>',
    "li-with-action": '<ul><li action="{}">x</li></ul>',
}


def _sink_cases():
    cases = []
    for sink, template in URL_SINKS.items():
        for scheme, value in (("js", "javascript:alert(1)"), ("js-encoded", "&#x6A;avascript&#58;alert(1)")):
            cases.append((f"sink-{sink}-{scheme}", template.format(value)))
    return cases


ALLOWED_TAGS = ("b", "strong", "i", "em", "u", "p", "ul", "ol", "li", "a")

# Attributes that run script or change what an allowed tag does.
HANDLERS = (
    "onclick=alert(1)",
    'onmouseover="alert(1)"',
    "onfocus='alert(1)' autofocus tabindex=1",
    'style="background:url(javascript:alert(1))"',
    "onpointerenter=alert(1) id=x class=y",
)


def _attribute_cases():
    cases = []
    for tag in ALLOWED_TAGS:
        for n, handler in enumerate(HANDLERS):
            href = ' href="https://example.com/"' if tag == "a" else ""
            cases.append((f"attr-{tag}-{n}", f"<{tag}{href} {handler}>text</{tag}>"))
    cases += [
        ("attr-br-onload", "<br onload=alert(1)>"),
        ("attr-br-style", '<br style="x:expression(alert(1))">'),
        ("attr-slash-separator", "<b/onclick=alert(1)>x</b>"),
        ("attr-no-space-after-quote", '<a href="https://example.com/"onclick=alert(1)>x</a>'),
        ("attr-form-feed-separator", "<b\x0conclick=alert(1)>x</b>"),
        ("attr-nul-separator", "<b\x00onclick=alert(1)>x</b>"),
        ("attr-mixed-case-handler", "<i OnMouseOver=alert(1)>x</i>"),
        ("attr-uppercase-tag-and-handler", "<STRONG ONCLICK=alert(1)>x</STRONG>"),
        ("attr-entity-in-handler", "<u onclick=&#97;lert(1)>x</u>"),
        ("attr-quote-breakout", '<a href="https://example.com/&quot; onclick=&quot;alert(1)">x</a>'),
        ("attr-rel-opener", '<a href="https://example.com/" rel="opener">x</a>'),
        ("attr-target-blank", '<a href="https://example.com/" target="_blank">x</a>'),
        ("attr-ping", '<a href="https://example.com/" ping="https://example.com/track">x</a>'),
        ("attr-download", '<a href="https://example.com/" download="x.html">x</a>'),
        ("attr-xlink-on-a", '<a xlink:href="javascript:alert(1)">x</a>'),
        ("attr-namespaced-href", '<a xmlns:x="http://www.w3.org/1999/xlink" x:href="javascript:alert(1)">x</a>'),
        ("attr-formaction-on-b", "<b formaction=javascript:alert(1)>x</b>"),
        ("attr-srcdoc-on-p", '<p srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;">x</p>'),
        ("attr-is-on-p", '<p is="x-y" onclick=alert(1)>x</p>'),
        ("attr-popover", '<p popover id=q onbeforetoggle=alert(1)>x</p>'),
        ("attr-duplicate-handlers", "<em onclick=alert(1) onclick=confirm(1)>x</em>"),
        ("attr-very-long-name", "<b " + "o" * 300 + "nclick=alert(1) onclick=alert(1)>x</b>"),
    ]
    return cases


# Elements that are not allowed and run script, usually through an event handler.
def _element_cases():
    return [
        ("element-script", "<script>alert(1)</script>"),
        ("element-script-src", '<script src="https://example.com/x.js"></script>'),
        ("element-script-upper", "<SCRIPT>alert(1)</SCRIPT>"),
        ("element-script-mixed", "<ScRiPt>alert(1)</sCrIpT>"),
        ("element-script-unclosed", "<script>alert(1)"),
        ("element-script-slash-attr", "<script/x>alert(1)</script>"),
        ("element-script-type-module", '<script type="module">alert(1)</script>'),
        ("element-script-in-p", "<p>before<script>alert(1)</script>after</p>"),
        ("element-script-split-by-tag", "<scr<script>ipt>alert(1)</scr</script>ipt>"),
        ("element-script-double-open", "<<script>alert(1);//<</script>"),
        ("element-script-end-first", "</script><script>alert(1)</script>"),
        ("element-script-nul-name", "<scr\x00ipt>alert(1)</scr\x00ipt>"),
        ("element-script-comment-inside", "<script><!--alert(1)//--></script>"),
        ("element-script-escaped-end", "<script>/*</script>*/alert(1)</script>"),
        ("element-img-onerror", "<img src=x onerror=alert(1)>"),
        ("element-img-no-quotes-slash", "<img/src=x/onerror=alert(1)>"),
        ("element-img-form-feed", "<img\x0csrc=x\x0conerror=alert(1)>"),
        ("element-img-backtick", "<img src=`x`onerror=alert(1)>"),
        ("element-img-unclosed", "<img src=x onerror=alert(1)//"),
        ("element-img-entity-handler", "<img src=x onerror=&#x61;&#x6C;&#x65;&#x72;&#x74;(1)>"),
        ("element-body-onload", "<body onload=alert(1)>"),
        ("element-svg-onload", "<svg onload=alert(1)>"),
        ("element-svg-slash-onload", "<svg/onload=alert(1)>"),
        ("element-input-autofocus", "<input autofocus onfocus=alert(1)>"),
        ("element-select-autofocus", "<select autofocus onfocus=alert(1)></select>"),
        ("element-textarea-autofocus", "<textarea autofocus onfocus=alert(1)></textarea>"),
        ("element-details-toggle", "<details open ontoggle=alert(1)><summary>x</summary></details>"),
        ("element-video-source", "<video><source onerror=alert(1)></video>"),
        ("element-audio-onerror", "<audio src=x onerror=alert(1)></audio>"),
        ("element-video-poster", '<video poster="javascript:alert(1)"></video>'),
        ("element-marquee", "<marquee onstart=alert(1)>x</marquee>"),
        ("element-div-hover", "<div onmouseover=alert(1)>hover</div>"),
        ("element-span-click", "<span onclick=alert(1)>click</span>"),
        ("element-iframe-srcdoc", '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>'),
        ("element-iframe-onload", "<iframe onload=alert(1)></iframe>"),
        ("element-object-html", '<object type="text/html" data="data:text/html,<script>alert(1)</script>"></object>'),
        ("element-embed-svg", '<embed type="image/svg+xml" src="data:image/svg+xml,<svg onload=alert(1)>">'),
        ("element-style-import", "<style>@import 'javascript:alert(1)';</style>"),
        ("element-style-expression", "<style>p{width:expression(alert(1))}</style>"),
        ("element-style-animation", "<style>@keyframes k{}</style><p style=animation-name:k onanimationstart=alert(1)>x</p>"),
        ("element-link-import", '<link rel="import" href="data:text/html,<script>alert(1)</script>">'),
        ("element-isindex", "<isindex type=image src=1 onerror=alert(1)>"),
        ("element-keygen", "<keygen autofocus onfocus=alert(1)>"),
        ("element-frameset", "<frameset onload=alert(1)>"),
        ("element-table-background", "<table><td background=javascript:alert(1)>x</td></table>"),
        ("element-custom", "<x-widget onclick=alert(1)>x</x-widget>"),
        ("element-template-script", "<template><script>alert(1)</script></template>"),
        ("element-template-img", "<template><img src=x onerror=alert(1)></template>"),
        ("element-form-button", "<form><button formaction=javascript:alert(1)>x</button></form>"),
        ("element-form-input-image", "<form><input type=image src=x onerror=alert(1)></form>"),
        ("element-object-param", '<object><param name="src" value="javascript:alert(1)"></object>'),
        ("element-applet", "<applet code=x onerror=alert(1)></applet>"),
        ("element-xss-tag", "<xss onpointerover=alert(1) style=display:block>hover</xss>"),
        ("element-portal-like", "<portal src=javascript:alert(1)></portal>"),
        ("element-dialog-open", "<dialog open onclose=alert(1)>x</dialog>"),
        ("element-print-canary", "<img src=x onerror=print()>"),
        ("element-confirm-canary", "<img src=x onerror=confirm(1)>"),
        ("element-prompt-canary", "<img src=x onerror=prompt(1)>"),
        ("element-binding-canary", "<img src=x onerror=__xss(1)>"),
    ]


# Tags cut, nested, or left open so that a naive filter and the browser read them differently.
def _broken_cases():
    return [
        ("broken-nested-brackets", "<<img src=x onerror=alert(1)>>"),
        ("broken-tag-in-tag", "<b <img src=x onerror=alert(1)>>x</b>"),
        ("broken-tag-in-attr", '<a href="https://example.com/" <img src=x onerror=alert(1)>>x</a>'),
        ("broken-open-attr-at-end", '<a href="javascript:alert(1)'),
        ("broken-unclosed-a", "<a href=javascript:alert(1)>x"),
        ("broken-missing-gt", "<a href=javascript:alert(1) x"),
        ("broken-end-tag-with-attr", "<b>x</b onclick=alert(1)>"),
        ("broken-end-tag-script", "<p>x</p <script>alert(1)</script>"),
        ("broken-close-then-open", '<a href="https://example.com/"</a><img src=x onerror=alert(1)>'),
        ("broken-comment-script", "<!--<script>alert(1)</script>-->"),
        ("broken-comment-bang-close", "<!-- x --!><img src=x onerror=alert(1)>"),
        ("broken-comment-short", "<!--><img src=x onerror=alert(1)>-->"),
        ("broken-comment-dash", "<!---><img src=x onerror=alert(1)>-->"),
        ("broken-comment-unclosed", "<!--<img src=x onerror=alert(1)>"),
        ("broken-conditional-comment", "<!--[if IE]><script>alert(1)</script><![endif]-->"),
        ("broken-bogus-comment", "<! x=\"><img src=x onerror=alert(1)>\">"),
        ("broken-processing-instruction", "<?xml x=\"><img src=x onerror=alert(1)>\"?>"),
        ("broken-cdata", "<![CDATA[<img src=x onerror=alert(1)>]]>"),
        ("broken-doctype", "<!DOCTYPE html><img src=x onerror=alert(1)>"),
        ("broken-end-tag-bogus", "</x onclick=alert(1)><img src=x onerror=alert(1)>"),
        ("broken-slash-in-name", "<img/src/onerror=alert(1)>"),
        ("broken-quote-in-name", "<img\"src=x onerror=alert(1)>"),
        ("broken-lt-in-attr", '<b title="<img src=x onerror=alert(1)>">x</b>'),
        ("broken-gt-in-attr", "<b title='>'<img src=x onerror=alert(1)>x</b>"),
        ("broken-deep-nesting", "<b>" * 300 + "<img src=x onerror=alert(1)>" + "</b>" * 300),
        ("broken-misnested", "<b><i>x</b><img src=x onerror=alert(1)></i>"),
        ("broken-p-in-li", "<ul><li><p>x<li><img src=x onerror=alert(1)></ul>"),
        ("broken-table-foster", "<table><img src=x onerror=alert(1)><tr><td>x</table>"),
        ("broken-plaintext", "<plaintext><img src=x onerror=alert(1)>"),
        ("broken-listing", "<listing>&lt;img src=x onerror=alert(1)&gt;</listing>"),
        ("broken-entity-markup", "&lt;img src=x onerror=alert(1)&gt;"),
        ("broken-double-entity-markup", "&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;"),
        ("broken-nul-in-tag", "<i\x00mg src=x onerror=alert(1)>"),
        ("broken-control-chars", "\x01\x02<img\x08 src=x onerror=alert(1)>\x1f\x7f"),
        ("broken-fullwidth-brackets", "\uff1cscript\uff1ealert(1)\uff1c/script\uff1e"),
        ("broken-utf7-like", "+ADw-script+AD4-alert(1)+ADw-/script+AD4-"),
    ]


# SVG, MathML and the elements whose content is raw text: the parser changes namespace or
# tokenizer state, and markup that looks like text in one reading is a tag in another.
def _namespace_cases():
    return [
        ("ns-svg-script", "<svg><script>alert(1)</script></svg>"),
        ("ns-svg-script-href", '<svg><script href="data:text/javascript,alert(1)"></script></svg>'),
        ("ns-svg-animate", '<svg><animate onbegin=alert(1) attributeName=x dur=1s></svg>'),
        ("ns-svg-set-href", '<svg><a><set attributeName="href" to="javascript:alert(1)"/><text y="9">x</text></a></svg>'),
        ("ns-svg-animate-values", '<svg><a><animate attributeName="href" values="javascript:alert(1)"/><text y="9">x</text></a></svg>'),
        ("ns-svg-use-data", '<svg><use href="data:image/svg+xml,<svg id=\'x\' xmlns=\'http://www.w3.org/2000/svg\'><image href=\'1\' onerror=\'alert(1)\'/></svg>#x"/></svg>'),
        ("ns-svg-foreignobject", "<svg><foreignObject><img src=x onerror=alert(1)></foreignObject></svg>"),
        ("ns-svg-style-img", "<svg><style><img src=x onerror=alert(1)></style></svg>"),
        ("ns-svg-title-breakout", '<svg></p><style><a id="</style><img src=x onerror=alert(1)>">'),
        ("ns-svg-cdata", "<svg><![CDATA[><img src=x onerror=alert(1)>]]></svg>"),
        ("ns-svg-desc-html", "<svg><desc><img src=x onerror=alert(1)></desc></svg>"),
        ("ns-svg-image-onerror", "<svg><image href=x onerror=alert(1)></image></svg>"),
        ("ns-svg-handler-on-g", "<svg><g onclick=alert(1)><rect width=9 height=9 /></g></svg>"),
        ("ns-svg-upper", "<SVG><SCRIPT>alert(1)</SCRIPT></SVG>"),
        ("ns-math-href", '<math href="javascript:alert(1)"><mtext>x</mtext></math>'),
        ("ns-math-maction", '<math><maction actiontype="statusline" xlink:href="javascript:alert(1)">x</maction></math>'),
        ("ns-math-mglyph-style", "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>"),
        ("ns-math-mtext-style", '<math><mtext><h1><a><h6></a></h6><mglyph><svg><mtext><style><a title="</style><img src=x onerror=alert(1)>"></style></mtext></svg></mglyph></h1></mtext></math>'),
        ("ns-form-math-mglyph", "<form><math><mtext></form><form><mglyph><style></math><img src=x onerror=alert(1)>"),
        ("ns-math-annotation", '<math><annotation-xml encoding="text/html"><img src=x onerror=alert(1)></annotation-xml></math>'),
        ("ns-math-svg-mixed", '<math><mi><svg><style><img src=x onerror=alert(1)></style></svg></mi></math>'),
        ("ns-noscript-title", '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>'),
        ("ns-textarea-title", '<textarea><b title="</textarea><img src=x onerror=alert(1)>"></textarea>'),
        ("ns-title-breakout", '<title><b title="</title><img src=x onerror=alert(1)>"></title>'),
        ("ns-xmp-breakout", '<xmp><b title="</xmp><img src=x onerror=alert(1)>"></xmp>'),
        ("ns-noembed-breakout", '<noembed><b title="</noembed><img src=x onerror=alert(1)>"></noembed>'),
        ("ns-noframes-breakout", '<noframes><b title="</noframes><img src=x onerror=alert(1)>"></noframes>'),
        ("ns-iframe-text-breakout", '<iframe><b title="</iframe><img src=x onerror=alert(1)>"></iframe>'),
        ("ns-style-breakout", '<style><b title="</style><img src=x onerror=alert(1)>"></style>'),
        ("ns-select-template", "<select><template><img src=x onerror=alert(1)></template></select>"),
        ("ns-select-style", "<select><style><img src=x onerror=alert(1)></style></select>"),
        ("ns-template-in-p", "<p><template><b onclick=alert(1)>x</b></template></p>"),
        ("ns-svg-in-p-breakout", "<p><svg><p><img src=x onerror=alert(1)></svg></p>"),
        ("ns-xmlns-attr", '<b xmlns="http://www.w3.org/2000/svg" onclick=alert(1)>x</b>'),
        ("ns-foreign-a", '<svg><a xmlns="http://www.w3.org/1999/xhtml" href="javascript:alert(1)">x</a></svg>'),
    ]


# Markup hidden behind character references, one level or many: text in a body, but a title is
# decoded until nothing changes, so each level must be peeled off and what appears cleaned.
def _encoded_cases():
    deep = "&" + "amp;" * 20
    deeper = "&" + "amp;" * 50
    return [
        ("encoded-decimal", "&#60;img src=x onerror=alert(1)&#62;"),
        ("encoded-hex", "&#x3c;img src=x onerror=alert(1)&#x3E;"),
        ("encoded-zero-padded", "&#0000060;script&#0000062;alert(1)&#0000060;/script&#0000062;"),
        ("encoded-no-semicolon", "&lt;img src=x onerror=alert(1)&gt"),
        ("encoded-legacy-glued", "&ltb&gtbold&lt/b&gt"),
        ("encoded-uppercase-named", "&LT;img src=x onerror=alert(1)&GT;"),
        ("encoded-double-numeric", "&amp;#60;img src=x onerror=alert(1)&amp;#62;"),
        ("encoded-triple", "&amp;amp;lt;img src=x onerror=alert(1)&amp;amp;gt;"),
        ("encoded-twenty-levels", f"{deep}lt;b{deep}gt;bold"),
        ("encoded-fifty-levels", f"{deeper}lt;script"),
        ("encoded-split-reference", "&&amp;lt;;img src=x onerror=alert(1)>"),
        ("encoded-nbsp-then-tag", "&nbsp;&lt;b&gt;x&nbsp;"),
        ("encoded-copy-without-semicolon", "&copy 2026 &amp;copy"),
    ]


# Elements whose content must disappear with them (docs/features.md).
DROPPED_WITH_CONTENT = (
    "script", "style", "template", "iframe", "object", "embed", "noscript", "svg", "math",
    "textarea", "title", "xmp", "noembed", "noframes", "select",
)


def _dropped_cases():
    cases = []
    for n, tag in enumerate(DROPPED_WITH_CONTENT):
        if tag == "embed":
            # A void element: what it holds is its source.
            cases.append((f"content-{tag}", f'<embed src="data:text/html,marker{n}x">after'))
            continue
        cases.append((f"content-{tag}", f"<{tag}>marker{n}x alert(1)</{tag}>after"))
    return cases


def _all_hostile():
    cases = (
        _scheme_cases() + _sink_cases() + _attribute_cases() + _element_cases()
        + _broken_cases() + _namespace_cases() + _encoded_cases() + _dropped_cases()
    )
    names = [name for name, _ in cases]
    duplicates = {name for name in names if names.count(name) > 1}
    assert not duplicates, f"duplicate case names: {sorted(duplicates)}"
    return cases


HOSTILE = _all_hostile()

# The marker each `content-<tag>` case carries: it must not appear in the stored body.
DROPPED_MARKERS = {f"content-{tag}": f"marker{n}x" for n, tag in enumerate(DROPPED_WITH_CONTENT)}

# Allowed markup and text, with the exact body Basin stores: html5ever's serialization of the
# parsed input (lower-case tag names, `<br>`, `&amp;`, `&lt;`, `&gt;`, `&nbsp;` escaped in text,
# `&amp;` and `&quot;` in attribute values; CR LF and lone CR read as LF).
REL = 'rel="noopener noreferrer"'
BENIGN = [
    ("", ""),
    ("Planned maintenance tonight.", "Planned maintenance tonight."),
    ("<b>bold</b> <strong>strong</strong>", "<b>bold</b> <strong>strong</strong>"),
    ("<i>i</i><em>em</em><u>u</u>", "<i>i</i><em>em</em><u>u</u>"),
    ("<p>one</p><p>two</p>", "<p>one</p><p>two</p>"),
    ("line<br>break", "line<br>break"),
    ("line<br/>break<BR />", "line<br>break<br>"),
    ("<B>x</B>", "<b>x</b>"),
    ("<ul><li>one</li><li>two</li></ul>", "<ul><li>one</li><li>two</li></ul>"),
    ("<ol><li><em>first</em></li><li><b>second</b></li></ol>",
     "<ol><li><em>first</em></li><li><b>second</b></li></ol>"),
    ("<p><b><i><u>nested</u></i></b></p>", "<p><b><i><u>nested</u></i></b></p>"),
    ('<a href="https://status.example.com/">status</a>',
     f'<a href="https://status.example.com/" {REL}>status</a>'),
    ('<a href="mailto:ops@example.com">mail us</a>',
     f'<a href="mailto:ops@example.com" {REL}>mail us</a>'),
    ('<p>See <a href="https://example.com/a/b?c=1&amp;d=2#e">the notes</a>.</p>',
     f'<p>See <a href="https://example.com/a/b?c=1&amp;d=2#e" {REL}>the notes</a>.</p>'),
    ("<A HREF='https://example.com/'>x</A>", f'<a href="https://example.com/" {REL}>x</a>'),
    ("<a href=https://example.com/>x</a>", f'<a href="https://example.com/" {REL}>x</a>'),
    ('<a href="https://example.com/" rel="noopener noreferrer">x</a>',
     f'<a href="https://example.com/" {REL}>x</a>'),
    ('<b>bold <a href="https://example.com/">link</a></b>',
     f'<b>bold <a href="https://example.com/" {REL}>link</a></b>'),
    ("<span>x</span>", "x"),
    ("<div><b>kept</b> in a div</div>", "<b>kept</b> in a div"),
    ("a & b", "a &amp; b"),
    ("a &amp; b", "a &amp; b"),
    ("1 < 2 and 3 > 2", "1 &lt; 2 and 3 &gt; 2"),
    ("&lt;b&gt;not bold&lt;/b&gt;", "&lt;b&gt;not bold&lt;/b&gt;"),
    ('"quoted" and \'single\'', '"quoted" and \'single\''),
    ("<p>Wartung \u2014 18:00 Uhr, Z\u00fcrich \u2713 \u65e5\u672c</p>",
     "<p>Wartung \u2014 18:00 Uhr, Z\u00fcrich \u2713 \u65e5\u672c</p>"),
    ("emoji \U0001f527 kept", "emoji \U0001f527 kept"),
    ("no\u00a0break", "no&nbsp;break"),
    ("&copy; 2026", "\u00a9 2026"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),
    ("crlf\r\nline", "crlf\nline"),
    ("del\x7fand\x85c1\x9bgone", "delandc1gone"),
    ("bell\x07and\x1bescape\x0bvt\x0cff", "bellandescapevtff"),
    ("<p>open paragraph", "<p>open paragraph</p>"),
    ("<b>unclosed bold", "<b>unclosed bold</b>"),
    ("<script>alert(1)</script>after", "after"),
    ("<!-- a comment -->text", "text"),
    ("<p onclick=\"alert(1)\">text</p>", "<p>text</p>"),
]

# Titles: plain text, markup removed, references decoded until stable, breaks to spaces,
# trimmed, control characters gone.
BENIGN_TITLES = [
    ("Planned maintenance", "Planned maintenance"),
    ("Maintenance <b>tonight</b>", "Maintenance tonight"),
    ("AT&amp;T outage", "AT&T outage"),
    ("AT&T outage", "AT&T outage"),
    ("<script>alert(1)</script>Incident", "Incident"),
    ("<style>p{}</style>Incident", "Incident"),
    ("  padded  ", "padded"),
    ("two\nlines\tand\r\ntabs", "two lines and tabs"),
    ("bell\x07del\x7fc1\x85gone", "belldelc1gone"),
    ("Z\u00fcrich \u2014 \u2713", "Z\u00fcrich \u2014 \u2713"),
    ("&amp;lt;b&amp;gt;x", "x"),
]
