// Placeholder while the page is written: registers no routes.
export function register() {}
