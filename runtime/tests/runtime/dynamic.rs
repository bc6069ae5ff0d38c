//! Dynamic artifacts: the dynamic section, sizes.

use crate::common::*;

/// A dynamic artifact whose `dynamic` section is invalid is refused before anything
/// is compiled or uploaded: the progress callback sees no event.
#[test]
fn invalid_dynamic_sections_are_refused_before_any_upload() {
    let Some(client) = client() else { return };
    let dir = scratch("dynamic-invalid");
    let mut manifest = write_stateful_artifact(&dir);
    let good = manifest.dynamic.clone().unwrap();
    let mut no_specializations = good.clone();
    no_specializations.specializations.clear();
    let mut first_not_the_program = good.clone();
    first_not_the_program.specializations.swap(0, 1);
    for (dynamic, why) in [
        (no_specializations, "lists no specialization"),
        (first_not_the_program, "is not the program"),
    ] {
        manifest.dynamic = Some(dynamic);
        write_manifest(&dir, &manifest);
        let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = events.clone();
        let mut options = LoadOptions::with_progress(move |e: &LoadEvent<'_>| {
            seen.lock().unwrap().push(format!("{e:?}"))
        });
        options.cache = CacheMode::Bypass;
        let err = Session::load_with(&dir, client, &options).unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
        assert_eq!(*events.lock().unwrap(), Vec::<String>::new(), "{why}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}
