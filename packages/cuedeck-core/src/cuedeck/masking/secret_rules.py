"""The built-in secret rules: provider token formats, key blocks, URLs and assignments.

Each rule is written from the provider's documented token format. Rules are found in
two steps, as dedicated scanners do: one Aho-Corasick pass finds every rule's literal
``keywords`` in the text, then each rule's pattern runs only where its keywords are
(``scope``): anchored at the keyword (``start``), right after it (``end``), on its line
(``line``) or, for patterns that begin with a literal, over the whole text (``text``).
``generic`` rules (secret-looking assignments) lose overlaps against provider rules, so
a Stripe key in ``STRIPE_KEY=...`` is reported as a Stripe key.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:
    from collections.abc import Callable

Scope = Literal["start", "end", "line", "text"]


@attrs.frozen
class SecretRule:
    """One kind of secret: a pattern whose ``group`` is the secret, and where to run it."""

    name: str
    description: str
    source: str  # the pattern, compiled on first use (most rules never run in a process)
    keywords: tuple[str, ...]
    scope: Scope = "start"
    group: int | None = 1  # None: whichever capture group took part in the match
    generic: bool = False
    check: Callable[[str, re.Match[str]], bool] | None = None  # a last test of a match

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        """The compiled pattern."""
        return re.compile(self.source)


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    if not value:
        return 0.0
    total = len(value)
    return -sum(n / total * math.log2(n / total) for n in Counter(value).values())


#: Values that stand for a secret in docs and templates rather than being one.
PLACEHOLDER_WORDS = frozenset(
    {
        "changeme",
        "change_me",
        "changeit",
        "dummy",
        "example",
        "fake",
        "false",
        "hunter2",
        "none",
        "null",
        "pass",
        "passwd",
        "password",
        "placeholder",
        "pwd",
        "redacted",
        "secret",
        "test",
        "token",
        "true",
        "undefined",
        "user",
        "username",
    }
)
_PLACEHOLDER_PARTS = ("example", "your_", "your-", "yourpass", "xxxx", "****", "....", "<", ">")
_REFERENCE = re.compile(r"^(?:\$|%|\{\{|\[REDACTED|#\{|@)")


def is_placeholder(value: str) -> bool:
    """Whether ``value`` looks like a template, a variable reference or a stand-in word."""
    stripped = value.strip().strip("\"'`")
    lowered = stripped.lower()
    if not stripped or lowered in PLACEHOLDER_WORDS or _REFERENCE.match(stripped):
        return True
    if len(set(stripped)) <= 2:  # xxxxxx, ******, 000000
        return True
    return any(part in lowered for part in _PLACEHOLDER_PARTS)


def _real(value: str, match: re.Match[str]) -> bool:
    return not is_placeholder(value)


def _random_token(value: str, match: re.Match[str]) -> bool:
    """A machine-made token: long, mixed letters and digits, high entropy, no stand-in."""
    return (
        len(value) >= 16
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and entropy(value) >= 3.5
        and not is_placeholder(value)
    )


def _bearer(value: str, match: re.Match[str]) -> bool:
    return len(value) >= 16 and entropy(value) >= 3.0 and not is_placeholder(value)


def _cases(*words: str) -> tuple[str, ...]:
    """Keywords in the spellings code uses: ``token``, ``Token`` (camelCase), ``TOKEN``."""
    return tuple(v for w in words for v in dict.fromkeys((w, w[0].upper() + w[1:], w.upper())))


# Token edges, as each token's own format draws them. A token that begins with a
# distinctive prefix (``ghp_``, ``AKIA``, ``sk_live_``) begins there, whatever precedes it:
# ``key_ghp_...``, ``leak-ghp_...`` and ``GH_TOKEN_ghp_...`` all hold a GitHub token. One
# with a short or common prefix (``SK``, ``key-``, ``eyJ``) may follow ``_`` or ``-`` but
# not a letter or digit (``monkey-...`` is no Mailgun key, base64 is full of ``eyJ``).
# Every prefixed token ends where its alphabet does: only a letter or digit right after
# it makes the match part of something longer (``AKIA..._backup.txt`` is a key).
_NOT_IN_WORD = r"(?<![A-Za-z0-9])"
_END = r"(?![A-Za-z0-9])"
# Tokens without a literal prefix are told from other text by their edges alone: not
# glued to more token characters on either side.
_L = r"(?<![A-Za-z0-9_\-])"
_R = r"(?![A-Za-z0-9_\-])"

Prefix = Literal["distinctive", "common", "none"]


def _token(
    name: str,
    description: str,
    body: str,
    *keywords: str,
    scope: Scope = "start",
    prefix: Prefix = "distinctive",
) -> SecretRule:
    """A provider token found by its own shape; with scope ``start`` it begins at a keyword.

    ``prefix`` says what the token starts with: a ``distinctive`` literal (no edge
    before it), a ``common`` one (not inside a word or number), or ``none`` (a character
    class: not glued to token characters on either side).
    """
    left, right = {
        "distinctive": ("", _END),
        "common": (_NOT_IN_WORD, _END),
        "none": (_L, _R),
    }[prefix]
    return SecretRule(
        name=name,
        description=description,
        source=f"{left}({body}){right}",
        keywords=keywords,
        scope=scope,
    )


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*)$")
_DB_SCHEME = re.compile(
    r"(?i)(?:postgres(?:ql)?|mysql|mariadb|mongodb(?:\+srv)?|rediss?|amqps?|mssql|sqlserver"
    r"|oracle|cockroachdb|clickhouse|couchdb|neo4j(?:\+s)?|cassandra|snowflake|db2)(?:\+\w+)?"
)
_WEB_SCHEME = re.compile(r"(?i)https?|ftps?|sftp|ssh|git|smtps?|imaps?|pop3s?|ldaps?|wss?|svn")


def _scheme(match: re.Match[str]) -> str:
    before = match.string[max(0, match.start() - 40) : match.start()]
    found = _SCHEME.search(before)
    return found.group(1).removeprefix("jdbc:") if found else ""


def _database_url(value: str, match: re.Match[str]) -> bool:
    return bool(_DB_SCHEME.fullmatch(_scheme(match))) and not is_placeholder(value)


def _web_url(value: str, match: re.Match[str]) -> bool:
    return bool(_WEB_SCHEME.fullmatch(_scheme(match))) and not is_placeholder(value)


# The user info of a URL: ``://user:password@host`` (the pattern starts with a literal,
# which Python's regex engine searches for quickly).
_USERINFO = r"://[^\s:@/'\"`]*:([^\s@/'\"`]+)@[A-Za-z0-9.\-\[]"
_ASSIGN = r"[\"'`]?\s*(?::=|=>|=|:)\s*"

_ENV_NAME = (
    r"SECRET|PASSWORD|PASSWD|PASSPHRASE|PWD|TOKEN|API_?KEY|ACCESS_?KEY|AUTH_?KEY|PRIVATE_?KEY"
    r"|CREDENTIALS?|SIGNING_?KEY|ENCRYPTION_?KEY|MASTER_?KEY|SALT|DSN"
)

RULES: tuple[SecretRule, ...] = (
    # --- cloud providers ---------------------------------------------------------------
    _token(
        "aws-access-key-id",
        "AWS access key id (AKIA/ASIA/ABIA/ACCA + 16 base32 characters)",
        r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}",
        "AKIA",
        "ASIA",
        "ABIA",
        "ACCA",
    ),
    SecretRule(
        "aws-secret-access-key",
        "AWS secret access key (40 base64 characters) assigned to an AWS secret name",
        rf"{_ASSIGN}[\"']?([A-Za-z0-9/+]{{40}})(?![A-Za-z0-9/+=])",
        (
            *_cases("secret_access_key", "secretAccessKey", "secret-access-key"),
            *_cases("aws_secret_key", "awsSecretKey"),
        ),
        scope="end",
        check=_real,
    ),
    _token(
        "gcp-api-key",
        "Google Cloud / Firebase API key (AIza...)",
        r"AIza[0-9A-Za-z_\-]{35}",
        "AIza",
    ),
    _token(
        "gcp-oauth-client-secret",
        "Google OAuth client secret (GOCSPX-...)",
        r"GOCSPX-[A-Za-z0-9_\-]{28}",
        "GOCSPX-",
    ),
    SecretRule(
        "azure-storage-key",
        "Azure storage or Service Bus key in a connection string (AccountKey=, SharedAccessKey=)",
        r"(?:AccountKey|SharedAccessKey)\s*=\s*([A-Za-z0-9+/]{40,88}={0,2})",
        ("AccountKey", "SharedAccessKey"),
    ),
    _token(
        "azure-client-secret",
        "Microsoft Entra ID (Azure AD) client secret (xxx8Q~...)",
        r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}",
        "Q~",
        scope="line",
        prefix="none",
    ),
    _token(
        "alibaba-access-key-id",
        "Alibaba Cloud access key id (LTAI...)",
        r"LTAI[A-Za-z0-9]{20}",
        "LTAI",
    ),
    _token(
        "digitalocean-token",
        "DigitalOcean personal, OAuth or refresh token (dop_v1_, doo_v1_, dor_v1_)",
        r"do[opr]_v1_[a-f0-9]{64}",
        "dop_v1_",
        "doo_v1_",
        "dor_v1_",
    ),
    _token(
        "heroku-api-key",
        "Heroku platform API key (HRKU-...)",
        r"HRKU-[A-Za-z0-9_\-]{58,64}",
        "HRKU-",
    ),
    _token(
        "flyio-token",
        "Fly.io access token (fo1_...)",
        r"fo1_[A-Za-z0-9_\-]{43}",
        "fo1_",
    ),
    _token(
        "supabase-token",
        "Supabase personal access token (sbp_...)",
        r"sbp_[a-f0-9]{40}",
        "sbp_",
    ),
    _token(
        "planetscale-token",
        "PlanetScale service token or password (pscale_tkn_, pscale_pw_, pscale_oauth_)",
        r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.\-]{32,64}",
        "pscale_",
    ),
    _token(
        "databricks-token",
        "Databricks personal access token (dapi + 32 hex)",
        r"dapi[a-f0-9]{32}(?:-\d)?",
        "dapi",
        prefix="common",
    ),
    _token(
        "dynatrace-token",
        "Dynatrace API token (dt0c01.*.*)",
        r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}",
        "dt0c01.",
    ),
    _token(
        "hashicorp-vault-token",
        "HashiCorp Vault service or batch token (hvs., hvb.)",
        r"hv[sb]\.[A-Za-z0-9_\-]{90,}",
        "hvs.",
        "hvb.",
    ),
    _token(
        "terraform-cloud-token",
        "Terraform Cloud / HCP Terraform API token (*.atlasv1.*)",
        r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,}",
        ".atlasv1.",
        scope="line",
        prefix="none",
    ),
    _token(
        "doppler-token",
        "Doppler token (dp.pt., dp.st., dp.sa., ...)",
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
        "dp.",
    ),
    _token(
        "pulumi-token",
        "Pulumi access token (pul-...)",
        r"pul-[a-f0-9]{40}",
        "pul-",
    ),
    _token(
        "tailscale-key",
        "Tailscale auth, API or OAuth client key (tskey-...)",
        r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]+-[A-Za-z0-9]{10,}",
        "tskey-",
    ),
    _token(
        "cloudflare-origin-ca-key",
        "Cloudflare Origin CA key (v1.0-...)",
        r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}",
        "v1.0-",
    ),
    # --- source hosting and package registries -----------------------------------------
    _token(
        "github-token",
        "GitHub token: classic (ghp_, gho_, ghu_, ghs_, ghr_) or fine-grained (github_pat_)",
        r"gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
    ),
    _token(
        "gitlab-token",
        "GitLab token (glpat-, gldt-, glrt-, glptt-, glcbt-, gloas-, ... and GR1348941 runner "
        "registration tokens)",
        r"(?:glpat|gldt|glrt|glptt|glcbt|gloas|glsoat|glffct|glimt|glagent|glft)-"
        r"[A-Za-z0-9_\-]{20,}|GR1348941[A-Za-z0-9_\-]{20,}",
        "glpat-",
        "gldt-",
        "glrt-",
        "glptt-",
        "glcbt-",
        "gloas-",
        "glsoat-",
        "glffct-",
        "glimt-",
        "glagent-",
        "glft-",
        "GR1348941",
    ),
    _token(
        "bitbucket-app-password",
        "Atlassian / Bitbucket app password (ATBB...)",
        r"ATBB[A-Za-z0-9_=.\-]{32}",
        "ATBB",
    ),
    _token(
        "atlassian-api-token",
        "Atlassian API token (ATATT3...)",
        r"ATATT3[A-Za-z0-9_\-=]{150,}",
        "ATATT3",
    ),
    _token("npm-token", "npm access token (npm_ + 36 characters)", r"npm_[A-Za-z0-9]{36}", "npm_"),
    SecretRule(
        "npmrc-auth",
        "_auth / _authToken / _password in an .npmrc",
        r"(?<![A-Za-z0-9])_(?:authToken|auth|password)\s*=\s*[\"']?([^\s\"']{8,})",
        ("_auth", "_password"),
        check=_real,
    ),
    _token(
        "pypi-token",
        "PyPI API token (pypi-AgEIcHlwaS5vcmc...)",
        r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}",
        "pypi-AgEIcHlwaS5vcmc",
    ),
    _token(
        "docker-hub-token",
        "Docker Hub personal access token (dckr_pat_...)",
        r"dckr_pat_[A-Za-z0-9_\-]{27}",
        "dckr_pat_",
    ),
    _token(
        "sonarqube-token",
        "SonarQube / SonarCloud token (squ_, sqp_, sqa_)",
        r"sq[upa]_[a-f0-9]{40}",
        "squ_",
        "sqp_",
        "sqa_",
    ),
    # --- communication -----------------------------------------------------------------
    _token(
        "slack-token",
        "Slack bot, user, app or refresh token (xoxb-, xoxp-, xoxa-, xoxe-, xapp-)",
        r"xox[abposre]-[0-9A-Za-z\-]{10,}|xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]{32,}",
        "xox",
        "xapp-",
    ),
    SecretRule(
        "slack-webhook-url",
        "Slack incoming webhook or workflow trigger URL",
        (
            r"hooks\.slack\.com/(?:services|workflows|triggers)/"
            r"(T[A-Z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9/]{10,})"
        ),
        ("hooks.slack.com",),
    ),
    SecretRule(
        "discord-webhook-url",
        "Discord webhook URL",
        r"discord(?:app)?\.com/api/webhooks/(\d+/[A-Za-z0-9_\-]{60,})",
        ("/api/webhooks/",),
        scope="line",
    ),
    _token(
        "telegram-bot-token",
        "Telegram bot token (bot id:AA...)",
        r"\d{8,10}:AA[A-Za-z0-9_\-]{33}",
        ":AA",
        scope="line",
        prefix="none",
    ),
    _token(
        "twilio-api-key",
        "Twilio API key SID (SK + 32 hex)",
        r"SK[0-9a-fA-F]{32}",
        "SK",
        prefix="common",
    ),
    SecretRule(
        "twilio-auth-token",
        "Twilio auth token (32 hex) assigned to a Twilio name",
        rf"[\w.\-]*{_ASSIGN}[\"']?([0-9a-f]{{32}})(?![0-9a-f])",
        _cases("twilio"),
        scope="end",
    ),
    _token(
        "sendgrid-api-key",
        "SendGrid API key (SG.xxx.yyy)",
        r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
        "SG.",
    ),
    _token(
        "mailgun-api-key",
        "Mailgun API key (key- + 32 hex)",
        r"key-[0-9a-f]{32}",
        "key-",
        prefix="common",
    ),
    _token(
        "mailchimp-api-key",
        "Mailchimp API key (32 hex + -usN)",
        r"[0-9a-f]{32}-us\d{1,2}",
        "-us",
        scope="line",
        prefix="none",
    ),
    _token(
        "resend-api-key",
        "Resend API key (re_...)",
        r"re_[A-Za-z0-9]{8}_[A-Za-z0-9]{24}",
        "re_",
        prefix="common",
    ),
    _token(
        "postman-api-key",
        "Postman API key (PMAK-...)",
        r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
        "PMAK-",
    ),
    _token(
        "notion-token",
        "Notion integration token (ntn_, secret_)",
        r"ntn_\d{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}",
        "ntn_",
        "secret_",
        prefix="common",
    ),
    _token(
        "linear-api-key",
        "Linear API key or OAuth token (lin_api_, lin_oauth_)",
        r"lin_api_[A-Za-z0-9]{40}|lin_oauth_[a-f0-9]{64}",
        "lin_api_",
        "lin_oauth_",
    ),
    # --- payments and commerce ---------------------------------------------------------
    _token(
        "stripe-secret-key",
        "Stripe secret or restricted key (sk_live_, sk_test_, rk_live_, rk_test_)",
        r"[sr]k_(?:live|test)_[A-Za-z0-9]{20,}",
        "sk_live_",
        "sk_test_",
        "rk_live_",
        "rk_test_",
    ),
    _token(
        "stripe-webhook-secret",
        "Stripe webhook signing secret (whsec_...)",
        r"whsec_[A-Za-z0-9+/=]{32,}",
        "whsec_",
    ),
    _token(
        "shopify-token",
        "Shopify access, custom-app, private-app or shared secret (shpat_, shpca_, shppa_, shpss_)",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
        "shp",
    ),
    _token(
        "square-token",
        "Square access token or OAuth secret (EAAA..., sq0atp-, sq0csp-)",
        r"sq0(?:atp|csp)-[0-9A-Za-z_\-]{22,43}|EAAA[A-Za-z0-9_\-]{60}",
        "sq0",
        "EAAA",
        prefix="common",
    ),
    # --- AI providers -------------------------------------------------------------------
    _token(
        "openai-api-key",
        "OpenAI API key (sk-...T3BlbkFJ..., sk-proj-, sk-svcacct-, sk-admin-)",
        r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}T3BlbkFJ[A-Za-z0-9_\-]{20,}"
        r"|sk-(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}",
        "sk-",
        prefix="common",
    ),
    _token(
        "anthropic-api-key",
        "Anthropic API or admin key (sk-ant-api03-, sk-ant-admin01-)",
        r"sk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_\-]{32,}",
        "sk-ant-",
    ),
    _token(
        "huggingface-token",
        "Hugging Face user or organization token (hf_, api_org_)",
        r"hf_[A-Za-z]{34}|api_org_[A-Za-z]{34}",
        "hf_",
        "api_org_",
        prefix="common",
    ),
    _token("groq-api-key", "Groq API key (gsk_...)", r"gsk_[A-Za-z0-9]{52}", "gsk_"),
    _token(
        "replicate-token",
        "Replicate API token (r8_...)",
        r"r8_[A-Za-z0-9]{37}",
        "r8_",
        prefix="common",
    ),
    _token("xai-api-key", "xAI API key (xai-...)", r"xai-[A-Za-z0-9]{80}", "xai-"),
    _token("perplexity-api-key", "Perplexity API key (pplx-...)", r"pplx-[A-Za-z0-9]{48}", "pplx-"),
    # --- monitoring --------------------------------------------------------------------
    _token(
        "sentry-token",
        "Sentry auth token (sntrys_, sntryu_)",
        r"sntry[su]_[A-Za-z0-9+/=_\-]{60,}",
        "sntry",
    ),
    _token(
        "grafana-token",
        "Grafana service account token or cloud API key (glsa_, glc_)",
        r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_eyJ[A-Za-z0-9+/=_\-]{60,}",
        "glsa_",
        "glc_",
    ),
    _token("newrelic-api-key", "New Relic user API key (NRAK-...)", r"NRAK-[A-Z0-9]{27}", "NRAK-"),
    # --- password managers and encryption ----------------------------------------------
    _token(
        "1password-service-account-token",
        "1Password service account token (ops_eyJ...)",
        r"ops_eyJ[A-Za-z0-9+/=_\-]{100,}",
        "ops_eyJ",
    ),
    _token(
        "1password-secret-key",
        "1Password account secret key (A3-XXXXXX-...)",
        r"A3-[A-Z0-9]{6}-[A-Z0-9]{6}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        "A3-",
        prefix="common",
    ),
    _token(
        "age-secret-key",
        "age encryption secret key (AGE-SECRET-KEY-1...)",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "AGE-SECRET-KEY-1",
    ),
    SecretRule(
        "private-key",
        "PEM / OpenSSH / PGP private key block (also with JSON-escaped newlines)",
        (
            r"(-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:[\s\S]*?-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----"
            # No END line (a truncated paste): mask the body up to the first blank line.
            r"|(?:[A-Za-z0-9+/=:,\- \t]|\\n|\r?\n(?![ \t]*\r?\n))*))"
        ),
        ("PRIVATE KEY",),
        scope="text",
    ),
    # --- tokens and credentials in standard shapes -------------------------------------
    _token(
        "jwt",
        "JSON Web Token (three base64url parts, header and payload start with eyJ)",
        r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{16,}",
        "eyJ",
        prefix="common",
    ),
    SecretRule(
        "database-url",
        "Password in a database connection URL (postgres://user:password@host, mongodb+srv://...)",
        _USERINFO,
        ("://",),
        scope="text",
        check=_database_url,
    ),
    SecretRule(
        "basic-auth-url",
        "Password in a URL's user info (https://user:password@host, ftp://, ssh://, ...)",
        _USERINFO,
        ("://",),
        scope="text",
        check=_web_url,
    ),
    SecretRule(
        "authorization-header",
        "Bearer, Basic or token credentials in an Authorization header",
        (
            r"[\"']?\s*[:=]\s*[\"']?(?:[Bb]earer|[Bb]asic|[Tt]oken|[Bb]ot|BEARER|BASIC)\s+"
            r"([A-Za-z0-9+/=._~\-]{16,})"
        ),
        _cases("authorization"),
        scope="end",
        check=_bearer,
    ),
    SecretRule(
        "env-secret",
        ".env-style assignment to a secret name (STRIPE_SECRET_KEY=..., export DB_PASSWORD=...)",
        (
            rf"(?m)^[ \t]*(?:export[ \t]+)?[A-Z0-9_]*(?:{_ENV_NAME})[A-Z0-9_]*[ \t]*=[ \t]*"
            r"(\"[^\"\n]{6,}\"|'[^'\n]{6,}'|[^\s#'\"]{6,})"
        ),
        ("SECRET", "PASS", "PWD", "TOKEN", "KEY", "CREDENTIAL", "SALT", "DSN"),
        scope="line",
        generic=True,
        check=_real,
    ),
    SecretRule(
        "secret-assignment",
        'High-entropy token assigned to a secret-like name (api_key: ..., "token": "...")',
        (
            rf"[\w.\-]*{_ASSIGN}"
            r"(?:[\"'`]([^\s\"'`]{16,})[\"'`]|([A-Za-z0-9+/=_\-.~]{16,})(?![\w(\[.]))"
        ),
        _cases(
            "secret",
            "passw",
            "passphrase",
            "pwd",
            "token",
            "key",
            "credential",
            "salt",
            "signature",
        ),
        scope="end",
        generic=True,
        group=None,
        check=_random_token,
    ),
)

#: Well-known values published in documentation as samples; never worth masking.
DOCUMENTED_SAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        # The sample token of jwt.io (HS256, "your-256-bit-secret"), quoted by many docs.
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9l"
        "IiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    }
)

RULE_NAMES = frozenset(rule.name for rule in RULES)
