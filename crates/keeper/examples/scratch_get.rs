use nft::{Family, Set, SetElem, SetElems, Socket};
fn main() {
    let mut s = Socket::open().unwrap();
    let f = Family::Inet;
    let mut b = s.batch(None);
    b.add(&nft::Table::new(f, "t"), 0);
    let mut set = Set::new(f, "t", "s");
    set.flags = Some(nft::set::flags::INTERVAL);
    set.key_type = Some(7);
    set.key_len = Some(4);
    set.id = Some(1);
    b.add(&set, 0);
    let el = |k: [u8; 4], end: bool| {
        let mut e = SetElem::key(&k);
        if end { e.flags = Some(1); }
        e
    };
    b.add(&SetElems::new(f, "t", "s", vec![el([10,0,0,0], false), el([11,0,0,0], true), el([12,0,0,0], false), el([12,0,1,0], true)]), 0);
    let r = s.commit(&mut b).unwrap();
    println!("commit {:?}", r.outcome);
    for (k, end) in [([10,1,2,3], false), ([10,1,2,3], true), ([10,0,0,0], true), ([11,0,0,0], true), ([12,0,0,5], false), ([12,0,0,5], true), ([13,0,0,0], false), ([10,0,0,0], false)] {
        let g = s.get(&SetElems::new(f, "t", "s", vec![el(k, end)]));
        println!("get {k:?} end={end}: {:?}", g.map(|o| o.map(|l| l.elems.iter().map(|e| (e.key.clone(), e.key_end.clone(), e.flags)).collect::<Vec<_>>())));
    }
    // overlap add
    let mut b = s.batch(None);
    b.add(&SetElems::new(f, "t", "s", vec![el([10,1,0,0], false), el([10,2,0,0], true)]), 0);
    println!("overlap {:?}", s.commit(&mut b).map(|r| r.outcome));
    // destroy elem (msg 30) of missing
    let mut b = s.batch(None);
    b.push(30, 0, &SetElems::new(f, "t", "s", vec![el([14,0,0,0], false), el([15,0,0,0], true)]), 0);
    println!("destroy missing {:?}", s.commit(&mut b).map(|r| r.outcome));
    // delete+readd same key, and DELSET+NEWSET same name
    let mut b = s.batch(None);
    b.delete(&SetElems::new(f, "t", "s", vec![el([12,0,0,0], false), el([12,0,1,0], true)]), 0);
    b.add(&SetElems::new(f, "t", "s", vec![el([12,0,0,0], false), el([12,0,1,0], true)]), 0);
    b.delete(&Set::new(f, "t", "s"), 0);
    let mut set2 = set.clone(); set2.id = Some(2);
    b.add(&set2, 0);
    println!("del+add {:?}", s.commit(&mut b).map(|r| r.outcome));
    // hash set with timeout: permanent + timeout 0 attr
    let mut b = s.batch(None);
    let mut h = Set::new(f, "t", "h");
    h.flags = Some(nft::set::flags::TIMEOUT); h.key_type=Some(7); h.key_len=Some(4); h.id=Some(3); h.timeout = Some(60000);
    b.add(&h, 0);
    let mut e0 = el([1,1,1,1], false); e0.timeout = Some(0);
    let e1 = el([1,1,1,2], false);
    let mut e2 = el([1,1,1,3], false); e2.timeout = Some(5000);
    b.add(&SetElems::new(f, "t", "h", vec![e0, e1, e2]), 0);
    println!("timeouts {:?}", s.commit(&mut b).map(|r| r.outcome));
    for e in s.set_elems(f, "t", "h").unwrap() { println!("  {:?} t={:?} x={:?}", e.key, e.timeout, e.expiration); }
}
