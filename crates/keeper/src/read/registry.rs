//! Reading the chain registry (see [`compile::registry`]): the user chains
//! that are set elements of our table, not kernel chains.

use super::Snapshot;
use compile::registry;
use nft::Socket;

/// Every registered chain of table `tname`, by one element dump; `None`
/// when the table has no registry set. Elements that are not a chain name
/// are described in `foreign`.
pub(crate) fn dump(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
    foreign: &mut Vec<String>,
) -> Result<Option<Vec<String>>, nft::Error> {
    let elems = match sock.set_elems(fam, tname, registry::SET) {
        Ok(e) => e,
        // ENOENT, negative as the kernel answers: no registry.
        Err(nft::Error::Kernel { code: -2, .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut names = Vec::with_capacity(elems.len());
    for e in elems {
        match e.key.as_deref().and_then(registry::name) {
            Some(n) => names.push(n),
            None => foreign.push(format!(
                "element {:?} of set {} (not a chain name)",
                e.key.unwrap_or_default(),
                registry::SET
            )),
        }
    }
    Ok(Some(names))
}

/// The chains among `names` that are registered in table `tname`: one
/// `GETSET`, then a `GETSETELEM` per name (or, for more than `bulk` names,
/// one dump). `None` when the table has no registry set.
pub(crate) fn lookup(
    sock: &mut Socket,
    fam: nft::Family,
    tname: &str,
    names: &[&str],
    bulk: usize,
) -> Result<Option<Vec<String>>, nft::Error> {
    if names.len() > bulk {
        let all = dump(sock, fam, tname, &mut Vec::new())?;
        return Ok(all.map(|mut all| {
            let wanted: std::collections::HashSet<&str> = names.iter().copied().collect();
            all.retain(|n| wanted.contains(n.as_str()));
            all
        }));
    }
    if sock
        .get(&nft::Set::new(fam, tname, registry::SET))?
        .is_none()
    {
        return Ok(None);
    }
    let mut found = Vec::new();
    for n in names {
        let Some(k) = registry::key(n) else { continue };
        let probe = nft::SetElems::new(fam, tname, registry::SET, vec![nft::SetElem::key(&k)]);
        if sock.get(&probe)?.is_some_and(|l| !l.elems.is_empty()) {
            found.push(n.to_string());
        }
    }
    Ok(Some(found))
}

/// Put registered chain `name` into the snapshot's model: empty, no
/// kernel chain, no references. A name that is also a kernel chain is
/// described as foreign (the kernel chain is what the model holds).
pub(crate) fn add(snap: &mut Snapshot, name: String) {
    if snap.table.chain(&name).is_some() {
        snap.foreign.push(also_kernel(&name));
        return;
    }
    if snap.table.new_chain(&name).is_err() {
        snap.foreign
            .push(format!("element {name} of set {}", registry::SET));
        return;
    }
    snap.chain_uses.insert(name.clone(), 0);
    snap.virtual_chains.insert(name);
}

/// The foreign object a registered chain that is also a kernel chain is.
pub(crate) fn also_kernel(name: &str) -> String {
    format!(
        "element {name} of set {} (also a kernel chain)",
        registry::SET
    )
}
