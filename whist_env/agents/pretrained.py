"""Pretrained agents: a trained policy network played with numpy alone (no torch, no solver, no heuristic).

    >>> from whist_env.agents import make_agent
    >>> agent = make_agent("pretrained(path=runs/gw/policy.npz)", "german_whist_v0")
    >>> agent = make_agent("pretrained", "german_whist_v0")   # the weights shipped with the package

**The network.** The actor of sb3-contrib's ``MaskablePPO`` with its default ``MlpPolicy`` (what
``training/`` and the notebooks train): the observation, flattened, goes through
``mlp_extractor.policy_net`` (``Linear`` layers, each followed by the policy's activation, ``Tanh`` by
default) and then ``action_net`` (one ``Linear``) to one logit per action. :class:`NumpyPolicy` computes
the same logits with numpy; the agent plays the argmax of the logits of the legal actions.

**The file** (``.npz``, written by :func:`export_policy`): the arrays ``hidden_<i>_weight`` (shape
``(out, in)``, as torch stores it), ``hidden_<i>_bias``, ``action_weight``, ``action_bias`` (float32),
``activations`` (one name per hidden layer: ``tanh``, ``relu``, ``elu``, ``silu``, ``leaky_relu``) and
``policy_format`` (the version of this layout). An ``.npz`` is a zip file, so the model's metadata
(:class:`~whist_env.fingerprint.ModelMetadata`: game id, all options, the layout fingerprint, the library
version) is stored in it exactly as in a saved model ``.zip`` (the member
:data:`whist_env.fingerprint.MEMBER`), and loading checks it with
:func:`~whist_env.fingerprint.check_model`, the check every model loader makes.

**Shipped weights** live in the game's folder, ``whist_env/games/<name>/pretrained.npz``, beside its model card
``model_card.md`` (``docs/model_card_template.md``); the game's spec names them (``GameSpec.pretrained``), and
they are read with :mod:`importlib.resources`.

Only :func:`export_policy` needs torch (it reads a trained model); playing needs numpy only.
"""

from __future__ import annotations

import importlib.resources
import os
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from whist_env.encoding.canonical import CanonicalSuits
from whist_env.errors import FILE_DAMAGE, ModelMismatchError, OptionError
from whist_env.fingerprint import ModelMetadata, check_model, read_metadata, write_metadata
from whist_env.registry import GameRef, game_ids, get_spec, spec_of
from whist_env.view import PlayerView

if TYPE_CHECKING:
    from whist_env.agents.agent_spec import AgentSpec, MakeAgent
    from whist_env.agents.base import Agent
    from whist_env.spec import GameSpec

POLICY_FORMAT = 1
"""Version of the ``.npz`` array layout (independent of the metadata record's own format)."""

"""The package that holds the shipped weights and model cards."""


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, np.float32(0))


def _elu(x: np.ndarray) -> np.ndarray:
    # torch's default alpha of 1 (other settings are refused on export); expm1 only where it is used
    return np.where(x > 0, x, np.expm1(np.minimum(x, 0)))


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (np.float32(1) + np.exp(-x))


def _leaky_relu(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0, x, np.float32(0.01) * x)  # torch's default slope (other slopes are refused on export)


# Named functions, not lambdas: an agent is pickled to the arena's worker processes.
ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "tanh": np.tanh,
    "relu": _relu,
    "elu": _elu,
    "silu": _silu,
    "leaky_relu": _leaky_relu,
}
"""The activations a hidden layer may have, by the name stored in the file."""

# torch module class name -> (stored name, the attribute values that the numpy version assumes)
_TORCH_ACTIVATIONS: dict[str, tuple[str, dict[str, float]]] = {
    "Tanh": ("tanh", {}),
    "ReLU": ("relu", {}),
    "ELU": ("elu", {"alpha": 1.0}),
    "SiLU": ("silu", {}),
    "LeakyReLU": ("leaky_relu", {"negative_slope": 0.01}),
}

_TRAIN_EXTRA = "pip install 'whist_env[train]'"


class NumpyPolicy:
    """The actor of a MaskablePPO ``MlpPolicy`` as numpy arrays: observation -> one logit per action.

    Args:
        hidden: ``(weight, bias)`` of each hidden layer, weight of shape ``(out, in)`` as torch stores it.
        activations: the activation after each hidden layer (keys of :data:`ACTIVATIONS`).
        action: ``(weight, bias)`` of the output layer, weight of shape ``(num_actions, last hidden size)``.
        canonical_suits: the network reads observations with the suits renamed so that trump is spades, and its
            actions are renamed back (:mod:`whist_env.encoding.canonical`); set from the file's metadata by
            :func:`load_policy`. :meth:`logits` itself does not rename: the agents do.

    Raises:
        OptionError: for an unknown activation or shapes that do not chain.
    """

    def __init__(
        self,
        hidden: list[tuple[np.ndarray, np.ndarray]],
        activations: list[str],
        action: tuple[np.ndarray, np.ndarray],
        canonical_suits: bool = False,
    ) -> None:
        self.canonical_suits = canonical_suits
        if len(activations) != len(hidden):
            raise OptionError(f"{len(hidden)} hidden layers need as many activations, got {activations}")
        unknown = [a for a in activations if a not in ACTIVATIONS]
        if unknown:
            raise OptionError(f"unknown activation(s) {unknown}; known: {', '.join(ACTIVATIONS)}")
        self.activations = list(activations)
        # Kept transposed, (in, out), so that a row of observations multiplies from the left.
        self._layers = [(np.ascontiguousarray(w.T, np.float32), np.asarray(b, np.float32)) for w, b in hidden]
        self._out = (np.ascontiguousarray(action[0].T, np.float32), np.asarray(action[1], np.float32))
        width = self._layers[0][0].shape[0] if self._layers else self._out[0].shape[0]
        for i, (w, b) in enumerate([*self._layers, self._out]):
            if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],):
                raise OptionError(
                    f"layer {i} has weight {w.T.shape} and bias {b.shape}, which do not follow a layer of {width} "
                    "outputs; the file is damaged or not written by export_policy"
                )
            width = w.shape[1]
        self._fns = [ACTIVATIONS[a] for a in self.activations]

    @property
    def obs_size(self) -> int:
        """Length of the observation vector the network reads."""
        first = self._layers[0][0] if self._layers else self._out[0]
        return int(first.shape[0])

    @property
    def num_actions(self) -> int:
        """Number of logits (the game's action count)."""
        return int(self._out[0].shape[1])

    @property
    def hidden_sizes(self) -> list[int]:
        """The width of each hidden layer (the training config's ``net_arch``)."""
        return [int(w.shape[1]) for w, _ in self._layers]

    def logits(self, obs: np.ndarray, affine: Callable[..., np.ndarray] | None = None) -> np.ndarray:
        """The action logits (float32) of an observation ``(obs_size,)`` or a batch ``(n, obs_size)``.

        ``affine(x, w, b)``, when given, computes the first layer's ``x @ w + b`` instead (the batched arena's
        sparse kernel, :func:`whist_env.evaluation.batched.sparse_affine`: an observation is mostly zeros)."""
        x = np.asarray(obs, np.float32)
        for i, ((w, b), fn) in enumerate(zip(self._layers, self._fns, strict=True)):
            x = fn(affine(x, w, b) if i == 0 and affine is not None else x @ w + b)
        w, b = self._out
        return x @ w + b

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the ``.npz`` file (see the module docstring): copies, so that changing them changes no
        network (the shipped ones are loaded once and shared)."""
        out: dict[str, np.ndarray] = {"policy_format": np.array(POLICY_FORMAT, np.int64)}
        for i, (w, b) in enumerate(self._layers):
            out[f"hidden_{i}_weight"] = np.array(w.T, order="C")
            out[f"hidden_{i}_bias"] = b.copy()
        out["action_weight"] = np.array(self._out[0].T, order="C")
        out["action_bias"] = self._out[1].copy()
        out["activations"] = np.array(self.activations, dtype=np.str_)
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray], what: str = "the policy file") -> NumpyPolicy:
        """The policy from :meth:`arrays`' dict (or an opened ``.npz``).

        Raises:
            OptionError: for a missing array, a newer format, weights that are not finite numbers or shapes that do
                not chain.
        """
        try:
            fmt = int(arrays["policy_format"])
            if fmt > POLICY_FORMAT:
                raise OptionError(
                    f"{what} is of policy format {fmt}, newer than this whist_env reads ({POLICY_FORMAT}); "
                    "upgrade whist_env"
                )
            activations = [str(a) for a in np.atleast_1d(arrays["activations"])] if "hidden_0_weight" in arrays else []
            hidden = [
                (np.asarray(arrays[f"hidden_{i}_weight"]), np.asarray(arrays[f"hidden_{i}_bias"]))
                for i in range(len(activations))
            ]
            action = (np.asarray(arrays["action_weight"]), np.asarray(arrays["action_bias"]))
        except KeyError as err:  # an opened .npz says "<name> is not a file in the archive", a dict the name
            missing = str(err.args[0]).removesuffix(" is not a file in the archive") if err.args else ""
            raise OptionError(
                f"{what} lacks the array {missing!r}: it is not a policy written by whist_env's export_policy"
            ) from None
        except FILE_DAMAGE + (TypeError,) as err:  # no number, an array of objects, a damaged member
            raise OptionError(f"{what} is not a policy written by whist_env's export_policy ({err})") from None
        for array in [action[0], action[1], *(a for pair in hidden for a in pair)]:
            if array.dtype.kind not in "fiu" or not np.isfinite(array).all():
                raise OptionError(
                    f"{what} holds weights that are not finite numbers (NaN or infinity, or not numbers at all): "
                    "the training that wrote it diverged, or the file is damaged"
                )
        return cls(hidden, activations, action)

    @classmethod
    def from_sb3(cls, policy: Any) -> NumpyPolicy:
        """A numpy copy of the actor of an sb3 ``MaskableActorCriticPolicy`` (a plain ``MlpPolicy``).

        Raises:
            OptionError: when the policy is not a plain MLP (:func:`plain_mlp_problem` says why).
        """
        problem = plain_mlp_problem(policy)
        if problem is not None:
            raise OptionError(f"cannot export this policy to numpy: {problem}")
        hidden: list[tuple[np.ndarray, np.ndarray]] = []
        activations: list[str] = []
        for module in policy.mlp_extractor.policy_net:
            if type(module).__name__ == "Linear":
                hidden.append((_to_numpy(module.weight), _to_numpy(module.bias)))
            else:
                activations.append(_TORCH_ACTIVATIONS[type(module).__name__][0])
        net = policy.action_net
        return cls(hidden, activations, (_to_numpy(net.weight), _to_numpy(net.bias)))


def _to_numpy(tensor: Any) -> np.ndarray:
    return np.array(tensor.detach().cpu().numpy(), dtype=np.float32)


def plain_mlp_problem(policy: Any) -> str | None:
    """Why an sb3 policy is not a plain ``MlpPolicy`` actor that :class:`NumpyPolicy` reproduces, or None.

    Plain means: a flat ``Box`` observation read by the ``FlattenExtractor``, ``mlp_extractor.policy_net`` a
    sequence of ``Linear`` layers each followed by a supported activation, a ``Linear`` ``action_net`` with
    a bias, and a ``Discrete`` action space.
    """
    obs_space = getattr(policy, "observation_space", None)
    shape = getattr(obs_space, "shape", None)
    if type(obs_space).__name__ != "Box" or shape is None or len(shape) != 1:
        return f"it reads {type(obs_space).__name__} observations, not a flat Box (use MlpPolicy, not MultiInputPolicy)"
    if type(getattr(policy, "action_space", None)).__name__ != "Discrete":
        return "its action space is not Discrete"
    extractor = getattr(policy, "pi_features_extractor", getattr(policy, "features_extractor", None))
    if type(extractor).__name__ != "FlattenExtractor":
        return f"its features extractor is {type(extractor).__name__}, not FlattenExtractor"
    net = getattr(getattr(policy, "mlp_extractor", None), "policy_net", None)
    if net is None or type(net).__name__ != "Sequential":
        return "it has no mlp_extractor.policy_net of Linear layers"
    modules = list(net)
    for i, module in enumerate(modules):
        name = type(module).__name__
        want_linear = i % 2 == 0
        if want_linear and (name != "Linear" or module.bias is None):
            return f"policy_net layer {i} is {name}, where a Linear layer with a bias was expected"
        if not want_linear:
            if name not in _TORCH_ACTIVATIONS:
                return f"policy_net layer {i} is {name}; supported activations: {', '.join(_TORCH_ACTIVATIONS)}"
            for attr, value in _TORCH_ACTIVATIONS[name][1].items():
                if float(getattr(module, attr)) != value:
                    return f"policy_net layer {i} is {name} with {attr}={getattr(module, attr)}, not {value}"
    if len(modules) % 2:
        return "policy_net ends in a Linear layer without an activation"
    action_net: Any = getattr(policy, "action_net", None)
    if type(action_net).__name__ != "Linear" or action_net.bias is None:
        return f"its action_net is {type(action_net).__name__}, not a Linear layer with a bias"
    return None


# ----------------------------------------------------------------------------- files
def export_policy(
    model_or_policy: Any,
    path: str | Path,
    game_id: str,
    options: Mapping[str, Any] | None = None,
    canonical_suits: bool | None = None,
) -> Path:
    """Write the actor of a trained model as a ``.npz`` with its metadata: the one writer of the shipped format, for
    both trainers (torch needed here only, for an SB3 model). The file appears whole or not at all.

    Args:
        model_or_policy: a ``MaskablePPO`` model, its ``.policy``, the path of a saved model ``.zip``, or a
            :class:`NumpyPolicy` (what ``training/ppo/trainer.py``'s network gives as
            ``whist_env.learning.net.numpy_actor``).
        path: the file to write (``.npz`` is appended when the name does not end with it).
        game_id: the game the model was trained on.
        options: that game's options as trained (defaults filled in from the rules).
        canonical_suits: whether the model was trained with the suits renamed (``canonical_suits`` in the training
            config); None: as the saved model's metadata says (False for an in-memory model or no metadata).

    Returns:
        The path written.

    Raises:
        ImportError: when torch or sb3-contrib is missing (``pip install 'whist_env[train]'``).
        OptionError: when the policy is not a plain ``MlpPolicy``, or its sizes do not fit the game.
        ModelMismatchError: when a saved model's own metadata is for another game or other options, or says
            another ``canonical_suits`` than the one given.
    """
    if not isinstance(model_or_policy, NumpyPolicy):
        try:
            import torch  # noqa: F401  (reading the model's parameters needs it)
        except ImportError as err:
            raise ImportError(f"export_policy reads a torch model and needs torch: {_TRAIN_EXTRA}") from err
    model: Any = model_or_policy
    if isinstance(model_or_policy, (str, Path)):
        saved = check_model(model_or_policy, game_id, options)
        if saved is not None and canonical_suits is not None and saved.canonical_suits != canonical_suits:
            raise ModelMismatchError(
                f"the model {model_or_policy} was trained with canonical_suits={saved.canonical_suits}, not "
                f"{canonical_suits}; leave canonical_suits unset to take it from the model"
            )
        if canonical_suits is None and saved is not None:
            canonical_suits = saved.canonical_suits
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as err:
            raise ImportError(f"export_policy loads a saved model with sb3-contrib: {_TRAIN_EXTRA}") from err
        model = MaskablePPO.load(str(model_or_policy), device="cpu")
    policy = getattr(model, "policy", model)
    numpy_policy = model if isinstance(model, NumpyPolicy) else NumpyPolicy.from_sb3(policy)
    metadata = ModelMetadata.for_game(game_id, options, canonical_suits=bool(canonical_suits))
    if (numpy_policy.obs_size, numpy_policy.num_actions) != (metadata.obs_size, metadata.num_actions):
        raise OptionError(
            f"the policy reads {numpy_policy.obs_size} values and has {numpy_policy.num_actions} actions, but "
            f"{game_id} with options {dict(options or {})} encodes {metadata.obs_size} values and has "
            f"{metadata.num_actions} actions; pass the game and options it was trained on"
        )
    out = Path(path)
    if out.suffix != ".npz":
        out = out.with_name(out.name + ".npz")  # np.savez would append it anyway; say so in the return value
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.stem + ".tmp.npz")
    np.savez(tmp, **numpy_policy.arrays())  # type: ignore[arg-type]
    write_metadata(tmp, metadata)
    os.replace(tmp, out)  # a run killed while exporting leaves the previous file, not half of a new one
    return out


def load_policy(path: str | Path, game_id: GameRef, options: Mapping[str, Any] | None = None) -> NumpyPolicy:
    """Read an exported policy after checking its metadata against a game (its id or its spec) and ``options``.

    Raises:
        OptionError: no file at ``path``, or not a policy written by :func:`export_policy`.
        ModelMismatchError: the policy was made for another game, other options or another layout (the
            message says what differs).
    """
    path = Path(path)
    if not path.is_file():
        raise OptionError(f"there is no exported policy at {path} (a .npz written by export_policy)")
    if not zipfile.is_zipfile(path):
        raise OptionError(f"{path} is not an exported policy (a .npz written by whist_env's export_policy)")
    spec = spec_of(game_id)
    metadata = check_model(path, spec, options)
    with np.load(path, allow_pickle=False) as data:
        policy = NumpyPolicy.from_arrays(data, what=str(path))
    policy.canonical_suits = metadata is not None and metadata.canonical_suits
    if metadata is None:  # no record to compare: at least the sizes must fit
        now = ModelMetadata.for_game(spec, options)
        if (policy.obs_size, policy.num_actions) != (now.obs_size, now.num_actions):
            raise ModelMismatchError(
                f"the policy {path} reads {policy.obs_size} values with {policy.num_actions} actions; {spec.game_id} "
                f"with these options encodes {now.obs_size} values with {now.num_actions} actions"
            )
    return policy


def shipped_games() -> list[str]:
    """The game ids for which the package ships pretrained weights."""
    return sorted(g for g in game_ids() if (file := get_spec(g).pretrained_file()) is not None and file.is_file())


_TRAINED: dict[tuple[Any, ...], dict[str, Any]] = {}


def shipped_options(game_id: GameRef) -> dict[str, Any] | None:
    """The options the weights shipped for a game (by id or by spec) were trained with, every option given (defaults
    included), or None when none are shipped. A ``pretrained`` seat plays with these: other options are refused when
    they change the observation layout (:func:`~whist_env.fingerprint.check`), and warned about when only the episode
    length differs (the game's ``single_deal`` options).

    Raises:
        OptionError: for an unknown game.
        ModelMismatchError: when the file's metadata record is damaged.
    """
    spec = spec_of(game_id)
    resource = spec.pretrained_file()
    if resource is None or not resource.is_file():
        return None
    with importlib.resources.as_file(resource) as path:
        stat = path.stat()
        key = (spec.game_id, str(path), stat.st_size, stat.st_mtime_ns)
        if key not in _TRAINED:
            metadata = read_metadata(path)
            # a file without a record: the network was made for the game's one deal, the rest at their defaults
            options = metadata.options if metadata is not None else spec.make_rules(**spec.single_deal).config.as_dict()
            _TRAINED[key] = dict(options)
    return dict(_TRAINED[key])


_SHIPPED: dict[tuple[Any, ...], NumpyPolicy] = {}
"""Shipped policies already read, by game, file (path, size, mtime) and options: a server opens a table with a
``pretrained`` seat many times over, and reading and checking the file is most of the cost of making the agent."""
_SHIPPED_MAX = 64


def shipped_policy(game_id: GameRef, options: Mapping[str, Any] | None = None) -> NumpyPolicy:
    """The pretrained weights shipped for a game (by id or by spec), checked against ``options``.

    The file is read once per game and options; later calls return the same :class:`NumpyPolicy`, shared by
    the agents that play it (it is read-only: :meth:`NumpyPolicy.logits` changes nothing).

    Raises:
        OptionError: when none are shipped for the game (the message says how to use your own).
        ModelMismatchError: when ``options`` differ from those the weights were trained with.
    """
    spec = spec_of(game_id)  # an unknown game fails here, naming the known ones
    resource = spec.pretrained_file()
    if resource is None or not resource.is_file():
        shipped = ", ".join(shipped_games()) or "none yet"
        raise OptionError(
            f"agent 'pretrained' is not available yet for {spec.game_id}: no pretrained weights are shipped for it "
            f"(games with weights: {shipped}). Export a trained model with "
            "whist_env.agents.pretrained.export_policy(model, 'policy.npz', game_id, options) and play it with "
            "'pretrained(path=policy.npz)', or play the saved model itself with 'model:<path to the .zip>'"
        )
    with importlib.resources.as_file(resource) as path:
        stat = path.stat()
        key = (spec.game_id, str(path), stat.st_size, stat.st_mtime_ns, tuple(sorted((options or {}).items())))
        try:
            policy = _SHIPPED.get(key)
        except TypeError:  # an option value that cannot be a key (it will be refused): no cache
            return load_policy(path, spec, options)
        if policy is None:
            policy = load_policy(path, spec, options)
            if len(_SHIPPED) >= _SHIPPED_MAX:
                _SHIPPED.clear()
            _SHIPPED[key] = policy
        return policy


# ----------------------------------------------------------------------------- playing
def choose(logits: np.ndarray, legal: np.ndarray, deterministic: bool, rng: np.random.Generator) -> int:
    """The argmax of the legal actions' logits, or a sample of their softmax drawn with ``rng``.

    Args:
        logits: one logit per action, shape ``(num_actions,)``.
        legal: the legal-action mask, shape ``(num_actions,)``, bool or 0/1.
        deterministic: argmax (ties: the lowest action) or sample.
        rng: the generator a sample is drawn with.

    Raises:
        ValueError: when no action is legal.
    """
    legal = np.asarray(legal, bool)
    if not legal.any():
        raise ValueError("no legal action to choose from: the legal-action mask is empty")
    masked = np.where(legal, logits.astype(np.float64), -np.inf)
    if deterministic:
        return int(np.argmax(masked))
    p = np.exp(masked - masked.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def play_policy(
    policy: NumpyPolicy,
    canonical: CanonicalSuits | None,
    obs: np.ndarray,
    mask: np.ndarray,
    deterministic: bool,
    rng: np.random.Generator,
) -> int:
    """:func:`choose` on ``policy``'s logits; with ``canonical`` (a model trained with ``canonical_suits``), in the
    renamed game, the action renamed back."""
    if canonical is None:
        return choose(policy.logits(obs), mask, deterministic, rng)
    obs, mask, perm = canonical.forward(obs, mask)
    return int(canonical.action_back(choose(policy.logits(obs), mask, deterministic, rng), perm))


class PretrainedAgent:
    """Plays a policy network with numpy: the masked argmax of its logits for the encoded view.

    Nothing but the network decides: no solver, no heuristic, no torch.

    Args:
        game_id: the environment id, or the game's spec.
        path: an exported ``.npz`` (:func:`export_policy`); None: the weights shipped for the game.
        deterministic: the most likely legal action (True), or a sample of the policy drawn with ``rng``.
        **options: the game's options (checked against those the network was trained with).

    Raises:
        OptionError: no weights shipped for the game (``path=None``), no file at ``path``, or not an exported
            policy.
        ModelMismatchError: the network was trained for another game, other options or another observation
            layout (the message names every difference).
    """

    def __init__(self, game_id: GameRef, path: str | Path | None = None, deterministic: bool = True, **options: Any):
        spec = spec_of(game_id)
        game = spec.make_rules(**options)
        self.game_id: str = spec.game_id
        self.options = dict(options)
        self.path = None if path is None else str(path)
        self.deterministic = deterministic
        self.encoder = spec.make_encoder(game)
        self.policy = load_policy(path, spec, options) if path is not None else shipped_policy(spec, options)
        self.name = "pretrained" if path is None else f"pretrained:{Path(path).name}"
        self.canonical = CanonicalSuits(self.encoder.layout) if self.policy.canonical_suits else None

    def act(self, view: PlayerView, rng: np.random.Generator) -> int:
        obs, mask = self.encoder.encode_with_mask(view)
        return play_policy(self.policy, self.canonical, obs, mask, self.deterministic, rng)

    def __repr__(self) -> str:
        where = "shipped" if self.path is None else repr(self.path)
        return f"PretrainedAgent({self.game_id!r}, {where})"


def pretrained_agent(agent: AgentSpec, game: GameSpec[Any, Any], options: dict[str, Any], make: MakeAgent) -> Agent:
    """``pretrained`` / ``pretrained(path=<exported .npz>)`` (the builder of
    :data:`whist_env.agents.factory.AGENT_BUILDERS`)."""
    return PretrainedAgent(game, **agent.kwargs, **options)  # type: ignore[arg-type]


__all__ = [
    "ACTIVATIONS",
    "NumpyPolicy",
    "PretrainedAgent",
    "choose",
    "play_policy",
    "export_policy",
    "load_policy",
    "plain_mlp_problem",
    "shipped_games",
    "shipped_options",
    "shipped_policy",
]
