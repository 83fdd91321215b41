//! Listings: `list` (plain, `-terse`, `-name`), `save`, XML and JSON, in
//! ipset's exact layout, optionally with hash members sorted.

use super::sort;
use super::text::{self, Item};
use crate::error::{Kernel, Result};
use crate::model::{Members, Slot, Store};
use crate::parse::OutputMode;

/// What to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListOpts {
    pub mode: OutputMode,
    /// Headers only.
    pub terse: bool,
    /// Names only (not in save mode).
    pub names_only: bool,
    /// Sort hash members.
    pub sorted: bool,
}

fn items_plain(items: &[Item]) -> String {
    let mut s = String::new();
    for (name, v) in items {
        match v {
            None => s.push_str(&format!(" {name}")),
            Some(v) => s.push_str(&format!(" {name} {v}")),
        }
    }
    s
}

fn items_xml(items: &[Item]) -> String {
    let mut s = String::new();
    for (name, v) in items {
        match v {
            None => s.push_str(&format!("<{name}/>")),
            Some(v) => s.push_str(&format!("<{name}>{v}</{name}>")),
        }
    }
    s
}

/// Member lines of one set: (sort key, text).
fn member_lines(slot: &Slot, mode: OutputMode, now: u64) -> Vec<(String, String)> {
    let set = &slot.set;
    let h = &set.header;
    let mut out = Vec::new();
    let mut emit = |elem: String, items: Vec<Item>| {
        let line = match mode {
            OutputMode::Save => format!("add {} {elem}{}\n", slot.name, items_plain(&items)),
            OutputMode::Plain => format!("{elem}{}\n", items_plain(&items)),
            OutputMode::Xml => format!(
                "<member><elem>{elem}</elem>{}</member>\n",
                items_xml(&items)
            ),
            OutputMode::Json => {
                let mut s = format!("\n      {{\n        \"elem\" : \"{elem}\"");
                for (name, v) in &items {
                    match v {
                        None => s.push_str(&format!(",\n        \"{name}\" : true")),
                        Some(v) => s.push_str(&format!(",\n        \"{name}\" : {v}")),
                    }
                }
                s.push_str("\n      }");
                s
            }
        };
        let key = match mode {
            OutputMode::Plain => line.clone(),
            _ => elem.clone() + &items_plain(&items),
        };
        out.push((key, line));
    };
    match &set.members {
        Members::Map(m) => {
            for (k, e) in m.iter() {
                if e.expiry.expired(now) {
                    continue;
                }
                emit(text::key_text(h.ty, k, e), text::member_items(h, e, now));
            }
        }
        Members::List(l) => {
            for (name, e) in l {
                if e.expiry.expired(now) {
                    continue;
                }
                emit(name.clone(), text::member_items(h, e, now));
            }
        }
    }
    out
}

fn live_len(slot: &Slot, now: u64) -> usize {
    match &slot.set.members {
        Members::Map(m) => m.iter().filter(|(_, e)| !e.expiry.expired(now)).count(),
        Members::List(l) => l.iter().filter(|(_, e)| !e.expiry.expired(now)).count(),
    }
}

/// Print one set or every set. `now` decides expiry and remaining timeouts.
pub fn listing(store: &Store, name: Option<&str>, o: &ListOpts, now: u64) -> Result<String> {
    let slots: Vec<&Slot> = match name {
        Some(n) => vec![store.slot_named(n).ok_or(Kernel::NoSet)?],
        None => store.in_dump_order(),
    };
    let mode = o.mode;
    let names_only = o.names_only && mode != OutputMode::Save;
    let terse = o.terse && mode != OutputMode::Save;
    let mut s = String::new();
    match mode {
        OutputMode::Xml => s.push_str("<ipsets>\n"),
        OutputMode::Json => s.push_str("[\n"),
        _ => {}
    }
    for (idx, slot) in slots.iter().enumerate() {
        if names_only {
            match mode {
                OutputMode::Xml => s.push_str(&format!("<ipset name=\"{}\"/>\n", slot.name)),
                OutputMode::Json => {
                    if idx > 0 {
                        s.push_str(",\n");
                    }
                    s.push_str(&format!("  {{ \"name\" : \"{}\" }}", slot.name));
                }
                _ => s.push_str(&format!("{}\n", slot.name)),
            }
            continue;
        }
        one_set(&mut s, store, slot, idx, o, terse, now);
    }
    match mode {
        OutputMode::Xml => s.push_str("</ipsets>\n"),
        OutputMode::Json => s.push_str("\n]\n"),
        _ => {}
    }
    Ok(s)
}

fn one_set(
    s: &mut String,
    store: &Store,
    slot: &Slot,
    idx: usize,
    o: &ListOpts,
    terse: bool,
    now: u64,
) {
    let h = &slot.set.header;
    let info = h.ty.info();
    let mode = o.mode;
    let header = text::header_items(h, mode == OutputMode::Json);
    let entries = live_len(slot, now);
    let refs = store.references(&slot.name);
    let mem = text::mem_size(h, entries);
    match mode {
        OutputMode::Save => s.push_str(&format!(
            "create {} {}{}\n",
            slot.name,
            info.name,
            items_plain(&header)
        )),
        OutputMode::Plain => {
            if idx > 0 {
                s.push('\n');
            }
            s.push_str(&format!(
                "Name: {}\nType: {}\nRevision: {}\nHeader:{}\nSize in memory: {mem}\nReferences: {refs}\nNumber of entries: {entries}\n",
                slot.name, info.name, info.revision, items_plain(&header)
            ));
            if !terse {
                s.push_str("Members:\n");
            }
        }
        OutputMode::Xml => {
            s.push_str(&format!(
                "<ipset name=\"{}\">\n<type>{}</type>\n<revision>{}</revision>\n<header>{}\n<memsize>{mem}</memsize>\n<references>{refs}</references>\n<numentries>{entries}</numentries>\n</header>\n",
                slot.name, info.name, info.revision, items_xml(&header)
            ));
            if !terse {
                s.push_str("<members>\n");
            }
        }
        OutputMode::Json => {
            if idx > 0 {
                s.push_str(",\n");
            }
            s.push_str(&format!(
                "  {{\n    \"name\" : \"{}\",\n    \"type\" : \"{}\",\n    \"revision\" : {},\n    \"header\" : {{\n",
                slot.name, info.name, info.revision
            ));
            for (name, v) in &header {
                match v {
                    None => s.push_str(&format!("      \"{name}\" : true,\n")),
                    Some(v) if *name == "family" => {
                        s.push_str(&format!("      \"{name}\" : \"{v}\",\n"))
                    }
                    Some(v) => s.push_str(&format!("      \"{name}\" : {v},\n")),
                }
            }
            s.push_str(&format!(
                "      \"memsize\" : {mem},\n      \"references\" : {refs},\n      \"numentries\" : {entries}\n"
            ));
            s.push_str(if terse {
                "    },\n"
            } else {
                "    },\n    \"members\" : ["
            });
        }
    }
    if !terse {
        let mut lines = member_lines(slot, mode, now);
        if o.sorted && h.ty.is_hash() {
            lines.sort_by(|a, b| sort::compare(&a.0, &b.0));
        }
        for (i, (_, l)) in lines.into_iter().enumerate() {
            if mode == OutputMode::Json && i > 0 {
                s.push(',');
            }
            s.push_str(&l);
        }
    }
    match (mode, terse) {
        (OutputMode::Xml, true) => s.push_str("</ipset>\n"),
        (OutputMode::Xml, false) => s.push_str("</members>\n</ipset>\n"),
        (OutputMode::Json, true) => s.push_str("    }"),
        (OutputMode::Json, false) => s.push_str("\n    ]\n  }"),
        _ => {}
    }
}
