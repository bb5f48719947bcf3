//! How serious an image finding is, decided here once for `image diff`
//! and `image verify`, so that the same thing found by either command is
//! judged by the same table. What differs between the commands is only
//! what is known of where the thing came from ([`Origin`]): `image diff`
//! sees it added or changed against the upstream; `image verify` has no
//! upstream, so a hook listed in no RECORD or an injection variable in the
//! config may be the base image's own (NGC images set `LD_LIBRARY_PATH`,
//! Debian's Python ships `/etc/python3.X/sitecustomize.py`), one step
//! lower; shipped by a distribution's RECORD, it is information.

use crate::finding::Severity;

/// What is known of where a file or setting came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// Added or changed against the upstream image.
    Changed,
    /// Present, with nothing to attribute it to (no upstream, no RECORD).
    Unattributed,
    /// Listed, with this content, in a distribution's RECORD.
    Shipped,
}

/// A Python start-up hook, by what it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hook {
    /// `sitecustomize.py` / `usercustomize.py`: a module every interpreter imports.
    Customize,
    /// A `.pth` file with an `import` line: code run at every interpreter start.
    PthImport,
    /// A `.pth` file that only adds `sys.path` entries (import shadowing).
    PthPath,
    /// A `.pth` file too large to read whole: CPython reads it all, the
    /// tool cannot say what it runs, and no honest one is that large.
    PthUnread,
}

/// One step less serious: what may be the base image's own.
fn lower(severity: Severity) -> Severity {
    match severity {
        Severity::Error => Severity::Warning,
        Severity::Warning | Severity::Info => Severity::Info,
    }
}

fn by_origin(changed: Severity, origin: Origin) -> Severity {
    match origin {
        Origin::Changed => changed,
        Origin::Unattributed => lower(changed),
        Origin::Shipped => Severity::Info,
    }
}

/// A start-up hook's severity.
pub(super) fn hook(hook: Hook, origin: Origin) -> Severity {
    if hook == Hook::PthUnread && origin != Origin::Shipped {
        return Severity::Error;
    }
    let changed = match hook {
        Hook::Customize | Hook::PthImport | Hook::PthUnread => Severity::Error,
        Hook::PthPath => Severity::Warning,
    };
    by_origin(changed, origin)
}

/// A config variable that loads code or packages from outside the shipped
/// engine (`PYTHONPATH`, `LD_PRELOAD`, `PIP_INDEX_URL`, ...).
pub(super) fn injection_env(origin: Origin) -> Severity {
    by_origin(Severity::Error, origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_and_verify_judge_by_one_table() {
        assert_eq!(hook(Hook::Customize, Origin::Changed), Severity::Error);
        assert_eq!(hook(Hook::PthImport, Origin::Changed), Severity::Error);
        assert_eq!(hook(Hook::PthPath, Origin::Changed), Severity::Warning);
        assert_eq!(hook(Hook::PthImport, Origin::Unattributed), Severity::Warning);
        assert_eq!(hook(Hook::PthPath, Origin::Unattributed), Severity::Info);
        assert_eq!(hook(Hook::Customize, Origin::Shipped), Severity::Info);
        assert_eq!(hook(Hook::PthUnread, Origin::Unattributed), Severity::Error);
        assert_eq!(hook(Hook::PthUnread, Origin::Shipped), Severity::Info);
        assert_eq!(injection_env(Origin::Changed), Severity::Error);
        assert_eq!(injection_env(Origin::Unattributed), Severity::Warning);
    }
}
