/** Rules about the account an action runs for, as the store found it. */
import { tokenUserGone } from "./refusals";

/** The access token's user, as looked up: gone (deleted since the token was made) is a 401. */
export function requireUser<U>(user: U | null | undefined): U {
  if (!user) throw tokenUserGone();
  return user;
}
