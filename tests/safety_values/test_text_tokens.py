import numpy as np
import pytest
import torch

from governor.safety_values.encoders import ObservationModel, TextQNet
from governor.safety_values.text_tokens import (
    NUM_ID,
    NUMBER_SCALE,
    UNK_ID,
    pad_batch,
    split_text,
)
from governor.worlds.driving.env import DrivingParams, describe
from governor.worlds.driving.text import DrivingTemplates, driving_vocabulary

PARAMS = DrivingParams()


def test_split_reads_numbers_words_and_marks():
    assert split_text("The car's heading is -12.5 degrees (to the left).") == [
        "the",
        "car",
        "'",
        "s",
        "heading",
        "is",
        -12.5,
        "degrees",
        "(",
        "to",
        "the",
        "left",
        ")",
        ".",
    ]
    assert split_text("counter-clockwise 30.00 m") == ["counter", "-", "clockwise", 30.0, "m"]


def test_numbers_are_values_and_unknown_words_are_unk():
    vocab = driving_vocabulary(PARAMS)
    a = vocab.encode("The goal is currently 90.00 m down the track.")
    b = vocab.encode("The goal is currently 35.50 m down the track.")
    assert (a.ids == b.ids).all() and a.ids[4] == NUM_ID
    assert a.values[4] == pytest.approx(90.0 / NUMBER_SCALE)
    assert b.values[4] == pytest.approx(35.5 / NUMBER_SCALE)
    assert (np.delete(a.values, 4) == 1.0).all()
    odd = vocab.encode("The zebra is purple")
    assert odd.ids.tolist()[1] == UNK_ID and odd.ids.tolist()[3] == UNK_ID
    assert odd.ids[0] == vocab.id("the") != UNK_ID


def test_texts_differing_only_in_a_number_get_different_encodings():
    torch.manual_seed(0)
    vocab = driving_vocabulary(PARAMS)
    net = TextQNet(len(vocab), d_model=16, ff=32, head_hidden=32).eval()
    base = describe(PARAMS, (2.0, 1.5, 0.1))
    other = base.replace("80.00 m down", "20.00 m down")
    assert other != base
    ids, values = pad_batch([vocab.encode(base), vocab.encode(other)])
    assert (ids[0] == ids[1]).all() and not (values[0] == values[1]).all()
    with torch.no_grad():
        q = net(torch.from_numpy(ids), torch.from_numpy(values))
    assert not torch.allclose(q[0], q[1])


def test_templates_render_exactly_the_tokens_of_the_text():
    vocab = driving_vocabulary(PARAMS)
    templates = DrivingTemplates(PARAMS, vocab)
    rng = np.random.default_rng(0)
    states = np.column_stack(
        [rng.uniform(-0.6, 10.6, 600), rng.uniform(-0.6, 3.6, 600), rng.uniform(-3.2, 3.2, 600)]
    )
    states[:20, 2] = 0.0  # heading printed as 0.0: no side word
    states[20] = (0.5, 1.0, 0.0)  # the first obstacle straight ahead
    ids, values = templates.encode_states(states)
    ref_ids, ref_values = pad_batch([vocab.encode(describe(PARAMS, s)) for s in states])
    assert (ids == ref_ids).all() and np.abs(values - ref_values).max() < 1e-6
    assert not (ids == UNK_ID).any()


def test_text_observation_model_reads_the_text_not_the_state():
    model = ObservationModel("text", PARAMS, {"d_model": 8, "ff": 16, "head_hidden": 16})
    net = model.network().eval()
    state = np.array([2.0, 1.5, 0.1])
    text = describe(PARAMS, state)
    with torch.no_grad():
        from_text = net(*model.from_observation({"text": text, "state": np.zeros(3)}))
        from_state = net(*model.from_states(state[None]))
        other = net(*model.from_observation(text.replace("80.00 m down", "20.00 m down")))
    assert torch.allclose(from_text, from_state, atol=1e-6)
    assert not torch.allclose(from_text, other)


def test_commerce_templates_render_exactly_the_tokens_of_the_page():
    from governor.worlds.commerce.env import CommerceParams, describe, named_start, random_carts
    from governor.worlds.commerce.text import CommerceTemplates, commerce_vocabulary

    params = CommerceParams()
    vocab = commerce_vocabulary(params)
    states = random_carts(params, 300, np.random.default_rng(0))
    states[0] = named_start(params, "ginger_ale")
    states[1, :-1] = -1  # an empty cart
    ids, values = CommerceTemplates(params, vocab).encode_states(states)
    ref_ids, ref_values = pad_batch([vocab.encode(describe(params, s)) for s in states])
    assert (ids == ref_ids).all() and np.abs(values - ref_values).max() < 1e-6
    assert not (ids == UNK_ID).any()
    # the footer's numbers: actions remaining and the total, as values
    tokens = vocab.encode(describe(params, states[0]))
    numbers = tokens.values[tokens.number_positions] * NUMBER_SCALE
    assert numbers[-2:] == pytest.approx([5.0, 68.5]) and 1.0 in numbers.tolist()
