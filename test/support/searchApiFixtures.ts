/**
 * Answers of the search APIs as their documentation records them (the fields and their nesting,
 * values of a real answer), with the result addresses pointed at a local test server. A test
 * server answers each provider's request with these only when the request is as documented.
 */

/** Tavily Search API, `POST https://api.tavily.com/search` (docs.tavily.com, "Search" endpoint). */
export const tavilyAnswer = (base: string) => ({
  query: "How fast did solar power capacity grow?",
  follow_up_questions: null,
  answer: null,
  images: [],
  results: [
    {
      url: `${base}/article`,
      title: "Solar power in 2026",
      content: "Solar power capacity grew by 30 percent in 2026, led by utility-scale plants.",
      score: 0.81025416,
      raw_content: null,
    },
    { url: `${base}/missing`, title: "Gone", content: "A page that is no longer there.", score: 0.4, raw_content: null },
  ],
  response_time: "1.67",
  request_id: "123e4567-e89b-12d3-a456-426614174111",
});

/** Brave Web Search API, `GET https://api.search.brave.com/res/v1/web/search` (api-dashboard.search.brave.com, "Web search" response). */
export const braveAnswer = (base: string) => ({
  type: "search",
  query: {
    original: "How fast did solar power capacity grow?",
    show_strict_warning: false,
    is_navigational: false,
    is_news_breaking: false,
    spellcheck_off: true,
    country: "us",
    bad_results: false,
    should_fallback: false,
    postal_code: "",
    city: "",
    header_country: "",
    more_results_available: true,
    state: "",
  },
  mixed: {
    type: "mixed",
    main: [
      { type: "web", index: 0, all: false },
      { type: "web", index: 1, all: false },
    ],
    top: [],
    side: [],
  },
  web: {
    type: "search",
    results: [
      {
        title: "Solar power in 2026",
        url: `${base}/article`,
        is_source_local: false,
        is_source_both: false,
        description: "<strong>Solar</strong> <strong>power</strong> capacity grew by 30 percent in 2026.",
        page_age: "2026-03-14T00:00:00",
        profile: { name: "Example", url: `${base}/article`, long_name: "example.com", img: "https://imgs.search.brave.com/x.png" },
        language: "en",
        family_friendly: true,
        type: "search_result",
        subtype: "generic",
        is_live: false,
        meta_url: {
          scheme: "http",
          netloc: "127.0.0.1",
          hostname: "127.0.0.1",
          favicon: "https://imgs.search.brave.com/f.png",
          path: "› article",
        },
        age: "March 14, 2026",
      },
      {
        title: "Not a web page",
        url: "ftp://example.com/x",
        description: "",
        type: "search_result",
        subtype: "generic",
        family_friendly: true,
      },
    ],
    family_friendly: true,
  },
});
