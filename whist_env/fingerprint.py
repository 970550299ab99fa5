"""What a saved model (or a dataset) was made for, and the check that it fits the game it is used with.

A model is tied to its game by more than the observation size: German Whist with
``include_history=False`` or ``phase1_follow_suit=False`` encodes the same number of values with another
meaning. So every model carries a :class:`ModelMetadata`:

* the game id and **all** the game's constructor options, defaults included, taken from the rules'
  validated config (options that change what an observation means live there, not in the encoder);
* the fingerprint of the observation layout's *structure* (:func:`layout_fingerprint`: piece names,
  kinds, sizes, labels, scales, in order; not the doc text), so a changed encoding is caught even when
  the options are the same;
* the library version, the observation size and the number of actions.

**Where it is stored.** Inside the model's ``.zip`` as the member ``whist_env_metadata.json``
(:data:`MEMBER`), so it travels with the file (stable-baselines3 ignores members it does not know).
:func:`write_metadata` adds it after ``model.save``; :func:`read_metadata` reads it without torch.

**The check.** :func:`check` compares a metadata with a game and options and raises
:class:`~whist_env.errors.ModelMismatchError` (an ``OptionError``) naming every difference, e.g.
``trained with include_history=True, loading for include_history=False``. The options that only set
how long an episode is (the arena's single-deal options: ``episode``, ``num_deals``) may differ (a model
trained on whole games is evaluated on single deals) as long as the layout is the same; that gives a
warning. :func:`check_model` is what the loaders call: a model without metadata (saved before this
existed, or by hand) loads with a warning.

**Datasets** use the same record: store ``ModelMetadata.for_game(game_id, options).to_dict()`` in the
dataset's header, and have the loader call ``check(ModelMetadata.from_dict(header), game_id, options)``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from whist_env.errors import FILE_DAMAGE, ModelMismatchError, OptionError, unreadable
from whist_env.registry import GameRef, game_id_of, spec_of

if TYPE_CHECKING:
    from whist_env.encoding.layout import Layout

MEMBER = "whist_env_metadata.json"
FORMAT = 1  # version of the metadata record itself
FINGERPRINT_CHARS = 16  # hex digits of the sha256 kept (64 bits: collisions are not a concern here)


def layout_fingerprint(layout: Layout) -> str:
    """A stable fingerprint of a layout's structure: sha256 of its pieces in order, the first 16 hex digits.

    Each piece contributes its name, kind, size, labels and scale; the doc text does not count (rewording
    a description does not change what a network sees). The action count is not part of it (the
    metadata records it apart).
    """
    pieces = [[p.name, p.kind, p.size, list(p.labels), float(p.scale)] for p in layout.pieces]
    text = json.dumps(pieces, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:FINGERPRINT_CHARS]


def library_version() -> str:
    """whist_env's version."""
    # The package is always imported before any of its modules: read it there rather than import the package
    # (which imports nearly everything, and would close an import circle through the agents).
    return str(getattr(sys.modules.get("whist_env"), "__version__", "unknown"))


@dataclasses.dataclass(frozen=True)
class ModelMetadata:
    """What a model or dataset was made for.

    Attributes:
        game_id: the environment id, e.g. ``"german_whist_v0"``.
        options: every constructor option of the game, defaults included (the validated config).
        layout_fingerprint: :func:`layout_fingerprint` of the observation layout.
        library_version: whist_env's version when it was written.
        obs_size: length of the observation vector.
        num_actions: size of the action space.
        format: version of this record.
        canonical_suits: the model reads observations with the suits renamed so that trump is spades and its
            actions are renamed back (:mod:`whist_env.encoding.canonical`); False in records written before it existed.
    """

    game_id: str
    options: Mapping[str, Any]
    layout_fingerprint: str
    library_version: str
    obs_size: int
    num_actions: int
    format: int = FORMAT
    canonical_suits: bool = False

    @classmethod
    def for_game(
        cls, game_id: GameRef, options: Mapping[str, Any] | None = None, *, canonical_suits: bool = False
    ) -> ModelMetadata:
        """The metadata of a game (by id or by spec) played with ``options`` (by a model with ``canonical_suits``
        or not).

        Raises:
            OptionError: for an unknown game or bad options.
        """
        spec = spec_of(game_id)
        game = spec.make_rules(**dict(options or {}))
        encoder = spec.make_encoder(game)  # the rules and the encoder, exactly as played
        return cls(
            game_id=spec.game_id,
            options=dict(sorted(game.config.as_dict().items())),
            layout_fingerprint=layout_fingerprint(encoder.layout),
            library_version=library_version(),
            obs_size=int(encoder.layout.size),
            num_actions=int(game.num_actions),
            canonical_suits=bool(canonical_suits),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        out = dataclasses.asdict(self)
        out["options"] = dict(self.options)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelMetadata:
        """The metadata from :meth:`to_dict`'s dict.

        Raises:
            ModelMismatchError: when a field is missing or the record is of a newer format.
        """
        try:
            fmt = int(data.get("format", FORMAT))
            metadata = cls(
                game_id=str(data["game_id"]),
                options=dict(data["options"]),
                layout_fingerprint=str(data["layout_fingerprint"]),
                library_version=str(data["library_version"]),
                obs_size=int(data["obs_size"]),
                num_actions=int(data["num_actions"]),
                format=fmt,
                canonical_suits=bool(data.get("canonical_suits", False)),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise ModelMismatchError(f"the metadata record is damaged ({type(err).__name__}: {err})") from err
        if fmt > FORMAT:
            raise ModelMismatchError(
                f"the metadata is of format {fmt}, newer than this whist_env reads ({FORMAT}); upgrade whist_env"
            )
        return metadata


def check(metadata: ModelMetadata, game: GameRef, options: Mapping[str, Any] | None = None, what: str = "") -> None:
    """Check that something made for ``metadata`` fits ``game`` played with ``options``.

    Args:
        metadata: what the model or dataset was made for.
        game: the game it is about to be used with (its id or its spec).
        options: that game's options (defaults filled in from the rules).
        what: names the model or dataset in messages (e.g. its path).

    Raises:
        ModelMismatchError: naming every difference (game, options, layout, sizes).
        OptionError: for an unknown game or bad options.
    """
    label = what or "the model"
    game_id = game_id_of(game)
    if metadata.game_id != game_id:
        raise ModelMismatchError(f"{label} was trained for {metadata.game_id}, not {game_id}; load it with that game")
    spec = spec_of(game)
    now = ModelMetadata.for_game(spec, options)
    lenient = set(spec.single_deal)  # the options that only say how long an episode is (as the arena uses them)
    errors: list[str] = []
    notes: list[str] = []
    for key in sorted(set(metadata.options) | set(now.options)):
        was = metadata.options.get(key, "<absent>")
        new = now.options.get(key, "<absent>")
        if was != new:
            text = f"trained with {key}={was!r}, loading for {key}={new!r}"
            (notes if key in lenient else errors).append(text)
    layout_differs = metadata.layout_fingerprint != now.layout_fingerprint
    if layout_differs:
        errors.extend(notes)  # an episode-length option that changed the layout is an error after all
        notes = []
        errors.append(
            f"the observation layout differs (fingerprint {metadata.layout_fingerprint} when trained with "
            f"whist_env {metadata.library_version}, {now.layout_fingerprint} now)"
        )
    if metadata.obs_size != now.obs_size:
        errors.append(f"trained on observations of {metadata.obs_size} values, the game now encodes {now.obs_size}")
    if metadata.num_actions != now.num_actions:
        errors.append(f"trained for {metadata.num_actions} actions, the game now has {now.num_actions}")
    if errors:
        raise ModelMismatchError(
            f"{label} does not fit {game_id} with these options: {'; '.join(errors)}. "
            "Pass the options it was trained with (see its metadata)."
        )
    if notes:
        warnings.warn(
            f"{label}: {'; '.join(notes)} (only the episode length differs; the observation layout is the same)",
            UserWarning,
            stacklevel=2,
        )


def read_metadata(path: str | Path) -> ModelMetadata | None:
    """The metadata stored in a model ``.zip``, or None when it has none.

    Raises:
        OptionError: when there is no file at ``path`` or it is not a zip file (not a saved model).
        ModelMismatchError: when the stored record is damaged.
    """
    path = Path(path)
    if not path.is_file():
        raise OptionError(f"there is no saved model at {path}")
    try:
        with zipfile.ZipFile(path) as zf:
            if MEMBER not in zf.namelist():
                return None
            raw = zf.read(MEMBER)
    except FILE_DAMAGE as err:
        raise OptionError(f"{path} is not a saved model (a .zip written by model.save): {err}") from err
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as err:  # not UTF-8, not JSON, an int of over 4300 digits, nested too deeply
        raise ModelMismatchError(f"the metadata in {path} is damaged: {unreadable(err)}") from err
    if not isinstance(data, dict):
        raise ModelMismatchError(f"the metadata in {path} is damaged: not a JSON object")
    return ModelMetadata.from_dict(data)


def write_metadata(path: str | Path, metadata: ModelMetadata) -> None:
    """Store ``metadata`` in the model ``.zip`` at ``path`` (replacing any stored before).

    The zip is rewritten to a temporary file beside it and renamed into place, so a crash leaves either
    the old file or the new one.
    """
    path = Path(path)
    payload = json.dumps(metadata.to_dict(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    fd, tmp_name = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                if info.filename != MEMBER:
                    dst.writestr(info, src.read(info.filename))
            dst.writestr(MEMBER, payload)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def save_model_metadata(
    path: str | Path, game_id: GameRef, options: Mapping[str, Any] | None = None, *, canonical_suits: bool = False
) -> ModelMetadata:
    """Store the metadata of ``game_id`` with ``options`` (and whether the model renames suits, see
    :mod:`whist_env.encoding.canonical`) in the model at ``path`` (what training calls)."""
    metadata = ModelMetadata.for_game(game_id, options, canonical_suits=canonical_suits)
    write_metadata(path, metadata)
    return metadata


def check_model(path: str | Path, game_id: GameRef, options: Mapping[str, Any] | None = None) -> ModelMetadata | None:
    """Check the model at ``path`` against a game (its id or its spec) with ``options`` (what every model loader
    calls).

    Returns:
        The model's metadata, or None for a model without (then a warning says so).

    Raises:
        OptionError: no file there, or not a saved model.
        ModelMismatchError: the model was made for another game, other options or another layout.
    """
    metadata = read_metadata(path)
    if metadata is None:
        warnings.warn(
            f"the model {path} carries no whist_env metadata (saved before it existed, or by hand): it cannot be "
            f"checked against {game_id_of(game_id)} and its options; make sure they are the ones it was trained with",
            UserWarning,
            stacklevel=2,
        )
        return None
    check(metadata, game_id, options, what=f"the model {path}")
    return metadata


__all__ = [
    "MEMBER",
    "ModelMetadata",
    "check",
    "check_model",
    "layout_fingerprint",
    "read_metadata",
    "save_model_metadata",
    "write_metadata",
]
