//! Who may do what in a project: roles, access levels and the nine capabilities, computed from
//! the caller and the project's chain of ancestors. Nothing here is stored; docs/permissions.md
//! is the same table in prose.
//!
//! - A member's role comes from the project's own members, or, when the project inherits, from
//!   the first ancestor that does not inherit (docs/projects.md#inherited-members).
//! - The access level adds implicit access: tenant Owners and Administrators (and platform
//!   admins acting in the tenant) are Owner of every Private and Shared project; every tenant
//!   member is Reader of Shared projects; Confidential projects grant nothing implicitly.
//! - The effective role is the higher of the two; capabilities follow from it.

use serde::Serialize;

use crate::auth::TenantStanding;

crate::wire_enum! {
    /// Who may see a project without being a member.
    pub(crate) enum AccessLevel {
        /// Members only; tenant administrators get no implicit access.
        Confidential,
        /// Members, and tenant administrators as Owner.
        Private,
        /// Members, tenant administrators as Owner, every tenant member as Reader.
        Shared,
    }
}

crate::wire_enum! {
    /// A member's role in a project, lowest first.
    pub(crate) enum ProjectRole {
        /// Lists and reads content.
        Reader,
        /// Also creates, changes and deletes content.
        Contributor,
        /// Also edits, deletes and grants access to the project.
        Owner,
    }
}

/// The role an access level grants without membership.
pub(crate) fn implicit_role(
    standing: TenantStanding,
    access_level: AccessLevel,
) -> Option<ProjectRole> {
    match (standing, access_level) {
        (TenantStanding::Admin, AccessLevel::Private | AccessLevel::Shared) => {
            Some(ProjectRole::Owner)
        }
        (TenantStanding::Member, AccessLevel::Shared) => Some(ProjectRole::Reader),
        _ => None,
    }
}

/// The higher of the membership role and the implicit role.
pub(crate) fn effective_role(
    member_role: Option<ProjectRole>,
    standing: TenantStanding,
    access_level: AccessLevel,
) -> Option<ProjectRole> {
    member_role.max(implicit_role(standing, access_level))
}

/// The caller's capabilities on one project (docs/permissions.md#capabilities-of-each-role).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Capabilities {
    /// Change name, description, metadata and settings.
    pub(crate) can_edit: bool,
    /// Change the access level.
    pub(crate) can_edit_access_level: bool,
    /// Delete the project itself.
    pub(crate) can_delete: bool,
    /// Change members.
    pub(crate) can_grant_access: bool,
    /// Create subprojects and datasets in it.
    pub(crate) can_create_content: bool,
    /// List its subprojects and datasets.
    pub(crate) can_list_content: bool,
    /// Change its subprojects and datasets.
    pub(crate) can_update_content: bool,
    /// Delete its subprojects and datasets.
    pub(crate) can_delete_content: bool,
    /// Read its datasets.
    pub(crate) can_read_content: bool,
}

impl Capabilities {
    /// What `role` may do; nothing without a role.
    pub(crate) fn of(role: Option<ProjectRole>) -> Self {
        let reader = role.is_some();
        let contributor = role >= Some(ProjectRole::Contributor);
        let owner = role == Some(ProjectRole::Owner);
        Self {
            can_edit: owner,
            can_edit_access_level: owner,
            can_delete: owner,
            can_grant_access: owner,
            can_create_content: contributor,
            can_list_content: reader,
            can_update_content: contributor,
            can_delete_content: contributor,
            can_read_content: reader,
        }
    }
}

/// One of the capabilities, for the checks a request makes before it reads its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capability {
    /// [`Capabilities::can_grant_access`].
    GrantAccess,
    /// [`Capabilities::can_create_content`].
    CreateContent,
    /// [`Capabilities::can_update_content`].
    UpdateContent,
    /// [`Capabilities::can_delete_content`].
    DeleteContent,
}

impl Capability {
    /// Whether `capabilities` hold it.
    pub(crate) fn held_in(self, capabilities: Capabilities) -> bool {
        match self {
            Self::GrantAccess => capabilities.can_grant_access,
            Self::CreateContent => capabilities.can_create_content,
            Self::UpdateContent => capabilities.can_update_content,
            Self::DeleteContent => capabilities.can_delete_content,
        }
    }

    /// What it allows, for the 403 of a caller without it: "you may not {this} in this
    /// project".
    pub(crate) fn action(self) -> &'static str {
        match self {
            Self::GrantAccess => "change members",
            Self::CreateContent => "create content",
            Self::UpdateContent => "update content",
            Self::DeleteContent => "delete content",
        }
    }
}

crate::wire_enum! {
    /// The capability filter of project lists. Matched case-sensitively, as the interface says.
    pub(crate) enum CapabilityFilter {
        /// Read datasets.
        CanReadContent,
        /// List content.
        CanListContent,
        /// Create content.
        CanCreateContent,
        /// Update content.
        CanUpdateContent,
        /// Delete content.
        CanDeleteContent,
    }
}

impl CapabilityFilter {
    /// Parses the exact name; other spellings are an error.
    pub(crate) fn parse_exact(raw: &str) -> Option<Self> {
        Self::ALL
            .iter()
            .copied()
            .find(|capability| capability.as_str() == raw)
    }

    /// The lowest role holding the capability.
    pub(crate) fn minimum_role(self) -> ProjectRole {
        match self {
            Self::CanReadContent | Self::CanListContent => ProjectRole::Reader,
            Self::CanCreateContent | Self::CanUpdateContent | Self::CanDeleteContent => {
                ProjectRole::Contributor
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_give_the_documented_capabilities() {
        assert_eq!(Capabilities::of(None), Capabilities::default());
        let reader = Capabilities::of(Some(ProjectRole::Reader));
        assert!(reader.can_read_content && reader.can_list_content);
        assert!(!reader.can_create_content && !reader.can_edit && !reader.can_delete_content);
        let contributor = Capabilities::of(Some(ProjectRole::Contributor));
        assert!(
            contributor.can_create_content
                && contributor.can_update_content
                && contributor.can_delete_content
        );
        assert!(!contributor.can_edit && !contributor.can_delete && !contributor.can_grant_access);
        let owner = Capabilities::of(Some(ProjectRole::Owner));
        assert!(
            owner.can_edit
                && owner.can_edit_access_level
                && owner.can_delete
                && owner.can_grant_access
        );
    }

    #[test]
    fn access_levels_grant_implicit_roles_except_confidential() {
        use AccessLevel::*;
        use TenantStanding::*;
        assert_eq!(implicit_role(Admin, Private), Some(ProjectRole::Owner));
        assert_eq!(implicit_role(Admin, Shared), Some(ProjectRole::Owner));
        assert_eq!(implicit_role(Admin, Confidential), None);
        assert_eq!(implicit_role(Member, Shared), Some(ProjectRole::Reader));
        assert_eq!(implicit_role(Member, Private), None);
        assert_eq!(implicit_role(Outsider, Shared), None);
        assert_eq!(
            effective_role(Some(ProjectRole::Contributor), Member, Shared),
            Some(ProjectRole::Contributor)
        );
    }

    #[test]
    fn capability_filters_are_case_sensitive() {
        assert_eq!(
            CapabilityFilter::parse_exact("CanReadContent"),
            Some(CapabilityFilter::CanReadContent)
        );
        assert_eq!(CapabilityFilter::parse_exact("canreadcontent"), None);
    }
}
