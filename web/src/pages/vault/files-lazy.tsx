/**
 * Where the item view, the history and the trash show files: files.tsx, loaded when an item with
 * files (or one whose files can be changed) is first shown, so it is not part of the first page.
 */
import { useEffect, useState } from "preact/hooks";
import type { Item } from "../../../../sdk";
import type { ItemAttachment } from "../../../../sdk/attachments/attachment";

type FilesModule = typeof import("./files");

let loaded: FilesModule | null = null;

function useFilesModule(wanted: boolean): FilesModule | null {
  const [mod, setMod] = useState(loaded);
  useEffect(() => {
    if (!wanted || mod) return;
    let gone = false;
    void import("./files").then((m) => {
      loaded = m;
      if (!gone) setMod(m);
    });
    return () => {
      gone = true;
    };
  }, [wanted]);
  return mod;
}

/** The item's files; with `onChanged`, removed and attached here too. */
export function ItemFiles({ item, onChanged }: { item: Item; onChanged?: () => void }) {
  const mod = useFilesModule(onChanged !== undefined || (item.attachments?.length ?? 0) > 0);
  return mod ? <mod.ItemFiles item={item} {...(onChanged && { onChanged })} /> : null;
}

/** Files of a kept revision or a trashed item, each with Download. */
export function FileList(props: { vaultId: string; files: readonly ItemAttachment[] | undefined; label: string }) {
  const files = props.files ?? [];
  const mod = useFilesModule(files.length > 0);
  return mod && files.length > 0 ? <mod.FileList vaultId={props.vaultId} files={files} label={props.label} /> : null;
}
