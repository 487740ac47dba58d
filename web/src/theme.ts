/** Light and dark: the person's choice, kept in this browser, else the system's (`prefers-color-scheme`, in styles.css). */
export const THEMES = [
  ["system", "Like the system"],
  ["light", "Light"],
  ["dark", "Dark"],
] as const;
export type Theme = (typeof THEMES)[number][0];

const KEY = "vault.theme";

export function savedTheme(): Theme {
  const t = localStorage.getItem(KEY);
  return t === "light" || t === "dark" ? t : "system";
}

/** Marks the page with the theme chosen (none: the system's). */
export function applyTheme(theme: Theme = savedTheme()): void {
  if (theme === "system") {
    localStorage.removeItem(KEY);
    delete document.documentElement.dataset.theme;
  } else {
    localStorage.setItem(KEY, theme);
    document.documentElement.dataset.theme = theme;
  }
}
