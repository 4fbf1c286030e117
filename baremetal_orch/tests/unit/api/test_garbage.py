#    Licensed under the Apache License, Version 2.0 (the "License"); you may
#    not use this file except in compliance with the License. You may obtain
#    a copy of the License at
#
#         http://www.apache.org/licenses/LICENSE-2.0
#
#    Unless required by applicable law or agreed to in writing, software
#    distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
#    WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
#    License for the specific language governing permissions and limitations
#    under the License.
"""Serving a request makes no class: pecan's argument reading
(:func:`baremetal_orch.api.app._argspec`) leaves nothing for the
collector's full passes, which stall the whole process."""

import gc
import inspect

from pecan import util as pecan_util

from baremetal_orch.api import app
from baremetal_orch.tests import base


def classes_freed(call):
    """The classes ``call`` made that only the collector freed."""
    gc.collect()
    flags = gc.get_debug()
    gc.set_debug(flags | gc.DEBUG_SAVEALL)
    try:
        call()
        gc.collect()
        return [o for o in gc.garbage if isinstance(o, type)]
    finally:
        gc.set_debug(flags)
        gc.garbage.clear()


class TestNoClassPerRequest(base.ApiTestCase):

    def test_requests_make_no_class(self):
        def serve():
            for _ in range(10):
                self.get('/v1/nodes')
                self.get('/v1/actions')
        self.get('/v1/nodes')
        self.assertEqual([], [c.__name__ for c in classes_freed(serve)])

    def test_the_argspec_is_pecans(self):
        def controller(self, ident, *rest, limit=None, **params):
            pass
        spec = pecan_util.getargspec(controller)
        self.assertIs(app.ArgSpec, type(spec))
        self.assertEqual(inspect.getfullargspec(controller)[:4],
                         tuple(spec))
        self.assertEqual(('self', 'ident'), tuple(spec.args))
        self.assertEqual(('rest', 'params', None),
                         (spec.varargs, spec.keywords, spec.defaults))
