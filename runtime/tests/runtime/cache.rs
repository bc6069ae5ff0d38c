//! The executable cache and the load progress events.

use crate::common::*;

#[test]
fn session_executables_come_from_the_cache_the_second_time() {
    let Some(client) = client() else { return };
    let dir = scratch("cache-artifact");
    write_artifact(&dir);
    let cache_dir = scratch("cache-dir").join("nested/executables");

    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = events.clone();
    let options = LoadOptions {
        cache_dir: Some(cache_dir.clone()),
        ..LoadOptions::with_progress(move |e| {
            let line = match e {
                LoadEvent::CompileStart { program_bytes } => {
                    format!("compile start {program_bytes}")
                }
                LoadEvent::CompileEnd { source, .. } => format!("compile end {source:?}"),
                LoadEvent::UploadStart { count, total_bytes } => {
                    format!("upload start {count} {total_bytes}")
                }
                LoadEvent::WeightUploaded {
                    index,
                    count,
                    name,
                    bytes,
                    uploaded_bytes,
                    total_bytes,
                } => {
                    format!("weight {index}/{count} {name} {bytes} {uploaded_bytes}/{total_bytes}")
                }
                LoadEvent::UploadEnd { total_bytes, .. } => format!("upload end {total_bytes}"),
                _ => "other".to_string(),
            };
            log.lock().unwrap().push(line);
        })
    };

    let first = Session::load_with(&dir, client, &options).unwrap();
    let report = first.load_report().clone();
    assert_eq!(report.compile, CompileSource::Compiled);
    assert!(
        report.cache_warnings.is_empty(),
        "{:?}",
        report.cache_warnings
    );
    let entry = report.cache_entry.clone().expect("an entry was written");
    assert!(entry.starts_with(&cache_dir), "{}", entry.display());
    assert_eq!(cache_files(&cache_dir), std::slice::from_ref(&entry));
    assert_eq!(report.weight_count, 2);
    assert_eq!(report.weight_bytes, 24 + 12);
    assert!(report.compile_ms > 0.0 && report.total_ms >= report.compile_ms);
    let program_bytes = SESSION_PROGRAM.len();
    assert_eq!(
        *events.lock().unwrap(),
        [
            format!("compile start {program_bytes}"),
            "compile end Compiled".to_string(),
            "upload start 2 36".to_string(),
            "weight 0/2 fc.weight 24 24/36".to_string(),
            "weight 1/2 fc.bias 12 36/36".to_string(),
            "upload end 36".to_string(),
        ]
    );
    events.lock().unwrap().clear();

    let second = Session::load_with(&dir, client, &options).unwrap();
    let report2 = second.load_report();
    assert_eq!(report2.compile, CompileSource::Cache);
    assert_eq!(report2.cache_entry.as_ref(), Some(&entry));
    assert_eq!(report2.cache_key, report.cache_key);
    assert!(
        report2.cache_warnings.is_empty(),
        "{:?}",
        report2.cache_warnings
    );
    // No compile start on a cache hit.
    assert_eq!(events.lock().unwrap()[0], "compile end Cache");
    assert_eq!(run_session(&first), run_session(&second));

    // Another program (or other options) gets another key.
    let other = scratch("cache-artifact-other");
    let mut m = write_artifact(&other);
    let changed = SESSION_PROGRAM.replace("%k, %k", "%k, %k ");
    std::fs::write(other.join("program.mlir"), &changed).unwrap();
    m.program.checksum = Checksum::of(changed.as_bytes());
    write_manifest(&other, &m);
    let third = Session::load_with(
        &other,
        client,
        &cache_options(&cache_dir, CacheMode::ReadWrite),
    )
    .unwrap();
    assert_eq!(third.load_report().compile, CompileSource::Compiled);
    assert_ne!(third.load_report().cache_key, report.cache_key);
    assert_eq!(cache_files(&cache_dir).len(), 2);

    for d in [
        dir,
        other,
        cache_dir.parent().unwrap().parent().unwrap().to_path_buf(),
    ] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn bypass_always_compiles_and_leaves_the_cache_alone() {
    let Some(client) = client() else { return };
    let dir = scratch("bypass-artifact");
    write_artifact(&dir);
    let cache_dir = scratch("bypass-cache");
    let bypass = cache_options(&cache_dir, CacheMode::Bypass);
    for _ in 0..2 {
        let s = Session::load_with(&dir, client, &bypass).unwrap();
        let r = s.load_report();
        assert_eq!(r.compile, CompileSource::Compiled);
        assert_eq!(r.cache_key, None);
        assert_eq!(r.cache_entry, None);
        run_session(&s);
    }
    assert!(cache_files(&cache_dir).is_empty());
    // Even with a valid entry present, bypass compiles.
    let rw = Session::load_with(
        &dir,
        client,
        &cache_options(&cache_dir, CacheMode::ReadWrite),
    )
    .unwrap();
    assert_eq!(rw.load_report().compile, CompileSource::Compiled);
    let s = Session::load_with(&dir, client, &bypass).unwrap();
    assert_eq!(s.load_report().compile, CompileSource::Compiled);
    assert_eq!(cache_files(&cache_dir).len(), 1);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache_dir).unwrap();
}

#[test]
fn corrupt_cache_entries_are_replaced() {
    let Some(client) = client() else { return };
    let dir = scratch("corrupt-artifact");
    write_artifact(&dir);
    let cache_dir = scratch("corrupt-cache");
    let options = cache_options(&cache_dir, CacheMode::ReadWrite);
    let first = Session::load_with(&dir, client, &options).unwrap();
    let expected = run_session(&first);
    let entry = first.load_report().cache_entry.clone().unwrap();
    let key = first.load_report().cache_key.unwrap();
    let good = std::fs::read(&entry).unwrap();

    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x10;
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("checksum", flipped),
        ("truncated", good[..3].to_vec()),
        ("payload is", good[..good.len() - 1].to_vec()),
        ("magic", vec![b'z'; good.len()]),
    ];
    for (needle, bytes) in damages {
        std::fs::write(&entry, &bytes).unwrap();
        let s = Session::load_with(&dir, client, &options).unwrap();
        let r = s.load_report();
        assert_eq!(r.compile, CompileSource::Compiled, "{needle}");
        assert!(
            r.cache_warnings.len() == 1 && r.cache_warnings[0].contains(needle),
            "{needle}: {:?}",
            r.cache_warnings
        );
        assert_eq!(run_session(&s), expected);
        // The entry was rewritten and is used next time.
        let s = Session::load_with(&dir, client, &options).unwrap();
        assert_eq!(s.load_report().compile, CompileSource::Cache, "{needle}");
        assert!(s.load_report().cache_warnings.is_empty());
    }

    // A well-formed entry whose payload the plugin cannot load.
    cache::store(&cache_dir, &key, b"well-formed entry, garbage executable").unwrap();
    let s = Session::load_with(&dir, client, &options).unwrap();
    let r = s.load_report();
    assert_eq!(r.compile, CompileSource::Compiled);
    assert!(
        r.cache_warnings.len() == 1 && r.cache_warnings[0].contains("could not be loaded"),
        "{:?}",
        r.cache_warnings
    );
    assert_eq!(run_session(&s), expected);
    let s = Session::load_with(&dir, client, &options).unwrap();
    assert_eq!(s.load_report().compile, CompileSource::Cache);

    // An unwritable cache location is a warning, not an error.
    let blocker = cache_dir.join("a-file");
    std::fs::write(&blocker, b"x").unwrap();
    let s = Session::load_with(
        &dir,
        client,
        &cache_options(&blocker.join("sub"), CacheMode::ReadWrite),
    )
    .unwrap();
    assert_eq!(s.load_report().compile, CompileSource::Compiled);
    assert_eq!(
        s.load_report().cache_warnings.len(),
        1,
        "{:?}",
        s.load_report()
    );
    assert_eq!(run_session(&s), expected);
    std::fs::remove_dir_all(dir).unwrap();
    std::fs::remove_dir_all(cache_dir).unwrap();
}
